"""dirichlet_reference.py: an independent reading of the learner's documented
streams (rng.c: keyed splitmix64 -> xoshiro256**, log-Gamma by Marsaglia-Tsang
with the shape+1 boost) and of the Dirichlet split (partition.c), used to
cross-check the known answers in tests/unit/test_learn_partition.c
(seed 5, alpha 0.5, 4 participants, 10 classes of 20 samples).
Run: python3 dirichlet_reference.py"""
import math
M=(1<<64)-1
def fin(z):
    z=((z^(z>>30))*0xbf58476d1ce4e5b9)&M
    z=((z^(z>>27))*0x94d049bb133111eb)&M
    return z^(z>>31)
G=0x9e3779b97f4a7c15
def key(seed,ent,pur,draw):
    h=fin((seed+G)&M); h=fin(((h^ent)+2*G)&M); h=fin(((h^pur)+3*G)&M); h=fin(((h^draw)+4*G)&M)
    s=[]
    for i in range(4):
        h=(h+G)&M; s.append(fin(h))
    return s
def rotl(x,k): return ((x<<k)|(x>>(64-k)))&M
def nxt(s):
    out=(rotl((s[1]*5)&M,7)*9)&M; t=(s[1]<<17)&M
    s[2]^=s[0]; s[3]^=s[1]; s[1]^=s[2]; s[0]^=s[3]; s[2]^=t; s[3]=rotl(s[3],45)
    return out
def u01(s): return (nxt(s)>>11)*2.0**-53
def uo(s): return ((nxt(s)>>11)+0.5)*2.0**-53
def below(s,n):
    lim=M-M%n
    while True:
        x=nxt(s)
        if x<lim: return x%n
def normal(s):
    u=uo(s); v=u01(s); return math.sqrt(-2*math.log(u))*math.cos(6.283185307179586*v)
def lgamma_(s,shape):
    boost=0
    if shape<1:
        boost=math.log(uo(s))/shape; shape+=1
    d=shape-1/3; c=1/math.sqrt(9*d)
    while True:
        x=normal(s); v=1+c*x
        if v<=0: continue
        v=v*v*v; u=uo(s)
        if math.log(u)<0.5*x*x+d-d*v+d*math.log(v): return math.log(d*v)+boost
seed,P,alpha=5,4,0.5
res=[[0]*10 for _ in range(P)]
for c in range(10):
    s=key(seed,c,2,0)
    lg=[lgamma_(s,alpha) for p in range(P)]
    mx=max(lg); z=sum(math.exp(l-mx) for l in lg); acc=0; cuts=[0]
    for p in range(P):
        acc+=math.exp(lg[p]-mx)/z
        k=20 if p==P-1 else int(math.floor(20*acc))
        k=min(k,20); k=max(k,cuts[-1]); cuts.append(k)
    for p in range(P): res[p][c]=cuts[p+1]-cuts[p]
for r in res: print(r)
