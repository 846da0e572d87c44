import json
FLOP_TOK = 46.6e9   # Llama-3.1-8B, tied embeddings, 2048-token causal sequences (spec 6.4)
SEQ = 2048
GiB = 2**30
def prof(name, board, hbm_gib, peak, mfu, hbm_bw, busy, comm, idle, srcs, notes):
    tau = FLOP_TOK*SEQ/(peak*mfu)
    opt = 24.0/hbm_bw
    return {
      "format": "hetsim-profile/1", "name": name, "board": board, "arch": "x86_64",
      "cpu": board + " (the GPU is the device; host CPU power not counted)",
      "idle_w": idle, "comm_w": comm,
      "gpu": {"hbm_bytes": hbm_gib*GiB, "opt_s_per_param": float("%.4g" % opt)},
      "provenance": {"kind": "estimated", "date": "2026-12-01", "sources": srcs + [
         "hbm_bytes = %d GiB: the product's memory size (nvidia-smi reports %d MiB)" % (hbm_gib, hbm_gib*1024),
         "opt_s_per_param = 24 B per element / %.4g B/s HBM bandwidth: ASSUMPTION that fused AdamW is memory-bound at 24 bytes moved per element (specs/fsdp.md 6.4)" % hbm_bw,
         "comm_w = %g W: ASSUMPTION, no public figure: SMs mostly idle while NCCL kernels move data" % comm,
         "idle_w = %g W: ASSUMPTION, no reliable public figure (nvidia-smi samples A100 power only part of the time, arXiv 2312.02741)" % idle],
         "notes": notes},
      "tasks": {"llama3.1-8b-s2048": {
         "tau_s": float("%.5g" % tau), "tau_cv": 0.02, "busy_w": busy, "overhead_s": 0, "batch_size": 2,
         "energy_measured": False,
         "provenance": {"kind": "estimated", "date": "2026-12-01", "sources": [
            "tau_s = %.5g s per 2048-token sequence = 46.6e9 FLOP/token x 2048 / (%.4g FLOP/s peak bf16 dense x MFU %.2f); FLOP/token = 6P + 6 L s d with P = 7.505e9 (tied embeddings), L = 32, d = 4096, causal attention counted at half (specs/fsdp.md 6.4)" % (tau, peak, mfu),
            "MFU %.2f: ASSUMPTION (FSDP training of an 8B model without activation checkpointing), not a measurement" % mfu,
            "tau_cv = 0.02: ASSUMPTION, per-GPU per-step jitter (clocks, thermal, data loader); no public figure",
            "busy_w = %g W: the board's maximum power (TDP) as the busy power, ASSUMPTION that a dense bf16 step runs at its power limit" % busy],
            "notes": "ESTIMATE: replace with measured step times (W&B time/Forward, time/Backward) and power from an external meter."}}}}
A100_SRC = ["peak 312e12 FLOP/s bf16 dense Tensor Core: NVIDIA A100 datasheet, also https://upb-pc2.atlassian.net/wiki/spaces/PC2DOK/pages/1900609/NVIDIA+A100+40GB+with+NVLINK",
            "busy 400 W: A100 SXM4 maximum TDP, https://www.techpowerup.com/gpu-specs/a100-sxm4-40-gb.c3506"]
out = {
 "a100-sxm4-40gb": prof("a100-sxm4-40gb", "NVIDIA A100-SXM4-40GB", 40, 312e12, 0.45, 1.555e12, 400, 150, 55,
        A100_SRC + ["HBM bandwidth 1.555e12 B/s: NVIDIA A100 datasheet (40 GB HBM2)"], "ESTIMATE from public figures and stated assumptions; never measured here."),
 "a100-sxm4-80gb": prof("a100-sxm4-80gb", "NVIDIA A100-SXM4-80GB", 80, 312e12, 0.45, 2.039e12, 400, 150, 55,
        A100_SRC + ["HBM bandwidth 2.039e12 B/s: NVIDIA A100 datasheet (80 GB HBM2e)"], "ESTIMATE from public figures and stated assumptions; never measured here."),
 "a100-sxm4-64gb": prof("a100-sxm4-64gb", "NVIDIA A100-SXM4 custom 64 GB (Leonardo Booster)", 64, 312e12, 0.45, 1.5e12, 400, 150, 55,
        A100_SRC + ["64 GB HBM2e: https://leonardo-supercomputer.cineca.eu/hpc-system",
                    "HBM bandwidth 1.5e12 B/s: ASSUMPTION (specs/fsdp.md 6.4 default; the custom part's figure is not published)",
                    "busy 400 W: ASSUMPTION that the custom part keeps the SXM4 TDP (not confirmed for Leonardo)"],
        "ESTIMATE for the GPU of the 512-GPU FL+HSDP experiment (specs/fsdp.md 3); never measured here."),
 "h100-sxm5-80gb": prof("h100-sxm5-80gb", "NVIDIA H100-SXM5-80GB", 80, 989e12, 0.40, 3.35e12, 700, 250, 90,
        ["peak 989e12 FLOP/s bf16 dense Tensor Core (1979e12 with sparsity): NVIDIA H100 datasheet (SXM5)",
         "busy 700 W: H100 SXM5 maximum TDP, NVIDIA H100 datasheet",
         "HBM bandwidth 3.35e12 B/s: NVIDIA H100 datasheet (SXM5, HBM3)"],
        "ESTIMATE from public figures and stated assumptions; MFU 0.40 and the comm/idle powers are assumptions; never measured here."),
}
for k, v in out.items():
    with open("devices/profiles/%s.json" % k, "w") as f:
        json.dump(v, f, indent=2); f.write("\n")
