"""test_hetsim.py: the Python package against an INSTALLED hetsim (ctest runs
it with PYTHONPATH=<prefix>/lib/python3/dist-packages after installing into a
temporary prefix; tests/install.cmake).

Known answers (the inverse-time split 400/200/100), errors carrying the
library's message with nothing changed, state save/restore, a run and a sweep
through the installed programs (same seed: same summary), tables as lists of
dicts without pandas, and the example training loop."""
import os
import subprocess
import sys
import tempfile
import unittest

import hetsim

PREFIX = os.environ.get("HS_TEST_PREFIX")


def telemetry(alloc, tau=(0.001, 0.002, 0.004), eps=(0.005, 0.003, 0.001)):
    return ([t * a for t, a in zip(tau, alloc)], [e * a for e, a in zip(eps, alloc)], alloc)


class Installed(unittest.TestCase):
    def test_package_and_library_come_from_the_prefix(self):
        if not PREFIX:
            self.skipTest("HS_TEST_PREFIX not set (run by ctest)")
        prefix = os.path.realpath(PREFIX)
        self.assertTrue(os.path.realpath(hetsim.__file__).startswith(prefix), hetsim.__file__)
        self.assertTrue(os.path.realpath(hetsim.library_path()).startswith(prefix))
        self.assertTrue(os.path.realpath(hetsim.program("hetsim")).startswith(prefix))
        self.assertEqual(os.path.realpath(hetsim.prefix()), prefix)


class ControllerTest(unittest.TestCase):
    def test_inverse_time_split_known_answer(self):
        c = hetsim.Controller("time-only", 3, 700, ema=0, deadband=0)
        self.assertEqual(c.allocation, [234, 233, 233])  # equal split, remainder to the first
        for _ in range(3):
            nxt = c.update(*telemetry(c.allocation))
        self.assertEqual(nxt, [400, 200, 100])
        self.assertEqual(c.allocation, [400, 200, 100])
        self.assertEqual(c.rounds, 3)
        self.assertEqual(c.config["ema"], 0.0)
        self.assertIsInstance(c.config["ema"], float)
        self.assertIsInstance(c.config["seed"], int)
        self.assertEqual(hetsim.Controller("balanced", 2, 10).config["w_e"], 0.5)
        self.assertEqual(c.policy, "time-only")

    def test_energy_weight_moves_samples_to_the_frugal(self):
        t = hetsim.Controller("time-only", 3, 700, ema=0, deadband=0)
        e = hetsim.Controller("energy-only", 3, 700, ema=0, deadband=0)
        t.update(*telemetry([234, 233, 233]))
        e.update(*telemetry([234, 233, 233]))
        self.assertGreater(e.allocation[2], t.allocation[2])
        self.assertEqual(sum(e.allocation), 700)

    def test_comm_reaches_round_time(self):
        # a = 1 and 2 s/sample, comm 0 and 50 s: T = 150, both rounds end together
        c = hetsim.Controller("round-time", 2, 200)
        self.assertEqual(c.update([100, 200], [1, 1], [100, 100], comm_s=[0, 50]), [150, 50])
        t = hetsim.Controller("time-only", 2, 200)
        self.assertEqual(t.update([100, 200], [1, 1], [100, 100], comm_s=[0, 50]), [133, 67])
        with self.assertRaises(hetsim.HetsimError) as cm:
            t.update([100, 200], [1, 1], [100, 100], comm_s=[0, float("nan")])
        self.assertIn("participant 1: comm_s", str(cm.exception))

    def test_errors_carry_the_library_message_and_change_nothing(self):
        c = hetsim.Controller("balanced", 3, 300)
        c.update([1, 2, 4], [5, 6, 9], [100, 100, 100])
        before, rounds = c.allocation, c.rounds
        with self.assertRaises(hetsim.HetsimError) as cm:
            c.update([1, -2, 4], [5, 6, 9], [100, 100, 100])
        self.assertIn("participant 1: time_s", str(cm.exception))
        self.assertLess(cm.exception.status, 0)
        self.assertEqual((c.allocation, c.rounds), (before, rounds))
        with self.assertRaises(hetsim.HetsimError) as cm:
            hetsim.Controller("no-such-policy", 3, 300)
        self.assertIn('no policy "no-such-policy"', str(cm.exception))
        with self.assertRaises(hetsim.HetsimError) as cm:
            hetsim.Controller("balanced", 3, 300, w_x=1)
        self.assertTrue(str(cm.exception).startswith("w_x:"), str(cm.exception))
        with self.assertRaises(hetsim.HetsimError) as cm:
            hetsim.Controller("balanced", 3, 300, w_e=0.25)  # presets fix w_e
        self.assertIn("w_e", str(cm.exception))
        with self.assertRaises(hetsim.HetsimError):
            c.update([1, 2], [5, 6], [100, 100])

    def test_save_restore_continues_exactly(self):
        a = hetsim.Controller("balanced", 3, 300, deadband=0)
        for k in range(4):
            a.update([1 + k, 2, 4], [5, 6 + k, 9], a.allocation)
        text = a.save()
        self.assertIn('"format": "hetsim-controller-state"', text)
        b = hetsim.Controller("balanced", 3, 300, deadband=0)
        b.restore(text)
        self.assertEqual(b.allocation, a.allocation)
        self.assertEqual(b.rounds, 4)
        for k in range(3):
            self.assertEqual(a.update([2, 1, 3 + k], [5, 6, 9], a.allocation),
                             b.update([2, 1, 3 + k], [5, 6, 9], b.allocation))
        other = hetsim.Controller("balanced", 3, 300)  # deadband differs
        with self.assertRaises(hetsim.HetsimError) as cm:
            other.restore(text)
        self.assertIn("config.deadband", str(cm.exception))

    def test_groups_and_policies(self):
        names = [n for n, _ in hetsim.policies()]
        self.assertIn("oort", names)
        self.assertIn("ema-batch", names)
        c = hetsim.Controller("time-only", 4, 400, groups=[0, 0, 1, 1], ema=0, deadband=0)
        c.update([1, 3, 1, 1], [1, 1, 1, 1], c.allocation)
        a = c.allocation
        self.assertEqual((a[0] + a[1], a[2] + a[3]), (200, 200))  # never across groups
        self.assertEqual(a[:2], [150, 50])

    def test_step_level_batches(self):
        c = hetsim.Controller("ema-batch", 2, 120, steps_per_round=4)
        self.assertEqual(c.step_batches, [15, 15])  # 120 over 4 steps, split evenly
        nxt = c.step_update([0.1, 0.3])             # rank 0 three times as fast
        self.assertEqual(sum(nxt), 30)
        self.assertGreater(nxt[0], nxt[1])
        with self.assertRaises(hetsim.HetsimError) as cm:
            c.step_update([0.1, float("nan")])
        self.assertIn("rank 1: step_time_s", str(cm.exception))
        with self.assertRaises(hetsim.HetsimError) as cm:
            hetsim.Controller("balanced", 2, 100).step_batches
        self.assertIn("step-level", str(cm.exception))

    def test_close(self):
        with hetsim.Controller("equal", 2, 5) as c:
            self.assertEqual(c.allocation, [3, 2])
        with self.assertRaises(hetsim.HetsimError):
            c.allocation


class ProgramsTest(unittest.TestCase):
    def test_run_returns_summary_and_tables(self):
        r = hetsim.run("testbed-mnist-pma", policy="time-only", seed=3, set={"rounds": 3})
        self.assertEqual(r.summary["policy"], "time-only")
        self.assertEqual(r.summary["rounds"], 3)
        self.assertGreater(r.summary["makespan_s"], 0)
        rounds = r.rounds if isinstance(r.rounds, list) else r.rounds.to_dict("records")
        self.assertEqual([row["round"] for row in rounds], [0, 1, 2])
        total = sum(row["duration_s"] for row in rounds)
        self.assertAlmostEqual(total, r.summary["makespan_s"], delta=1e-6 * total + 1e-6)
        again = hetsim.run("testbed-mnist-pma", policy="time-only", seed=3, set={"rounds": 3})
        self.assertEqual(again.summary, r.summary)
        self.assertIsNone(r.out)

    def test_tables_are_lists_without_pandas(self):
        r = hetsim.run("testbed-mnist-pma", set={"rounds": 1}, frame=False)
        self.assertIsInstance(r.devices, list)
        self.assertEqual(len(r.devices), r.summary["devices"])
        self.assertEqual(sum(d["samples"] for d in r.devices), r.summary["samples"])

    def test_run_keeps_an_out_folder(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r")
            r = hetsim.run("testbed-mnist-pma", set={"rounds": 1}, out=out)
            self.assertEqual(r.out, out)
            self.assertTrue(os.path.exists(os.path.join(out, "summary.json")))

    def test_expect_pins_a_run(self):
        with tempfile.TemporaryDirectory() as d:
            golden = os.path.join(d, "golden")
            hetsim.run("testbed-mnist-pma", policy="time-only", set={"rounds": 2}, out=golden)
            same = hetsim.run("testbed-mnist-pma", policy="time-only", set={"rounds": 2},
                              expect=golden)
            self.assertEqual(same.summary["rounds"], 2)
            with self.assertRaises(hetsim.HetsimError) as cm:
                hetsim.run("testbed-mnist-pma", policy="balanced", set={"rounds": 2},
                           expect=golden)
            self.assertEqual(cm.exception.status, 3)
            with self.assertRaises(hetsim.HetsimError) as cm:  # another run in the folder
                hetsim.run("testbed-mnist-pma", policy="balanced", set={"rounds": 2}, out=golden)
            self.assertIn("--force", str(cm.exception))
            r = hetsim.run("testbed-mnist-pma", policy="balanced", set={"rounds": 2}, out=golden,
                           force=True)
            self.assertEqual(r.summary["policy"], "balanced")

    def test_bad_input_raises_the_program_message(self):
        with self.assertRaises(hetsim.HetsimError) as cm:
            hetsim.run("testbed-mnist-pma", set={"rounds": -1})
        self.assertEqual(cm.exception.status, 2)
        self.assertIn("rounds", str(cm.exception))
        with self.assertRaises(hetsim.HetsimError):
            hetsim.run("no-such-scenario")

    def test_sweep(self):
        s = hetsim.sweep("testbed-mnist-pma", policies=["equal", "time-only"], seeds=[1, 2],
                         set={"rounds": 2}, jobs=2, frame=False)
        self.assertEqual(len(s.results), 4)
        self.assertEqual([p["policy.kind"] for p in s.points], ["equal", "time-only"])
        eq = [r["makespan_s"] for r in s.results if r["policy.kind"] == "equal"]
        self.assertAlmostEqual(s.points[0]["makespan_s_mean"], sum(eq) / 2, places=6)


class ExampleTest(unittest.TestCase):
    def test_train_loop_runs_and_resumes(self):
        if not PREFIX:
            self.skipTest("HS_TEST_PREFIX not set (run by ctest)")
        ex = os.path.join(PREFIX, "share", "hetsim", "examples", "train_loop.py")
        with tempfile.TemporaryDirectory() as d:
            st = os.path.join(d, "state.json")
            for _ in range(2):
                p = subprocess.run([sys.executable, ex, "--rounds", "2", "--budget", "600",
                                    "--state", st], capture_output=True, text=True)
                self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("restored", p.stdout)
            self.assertIn("round 4:", p.stdout)
            b = hetsim.Controller("time-only", 3, 600)
            with open(st) as f:
                b.restore(f.read())
            self.assertEqual(b.rounds, 4)


if __name__ == "__main__":
    unittest.main()
