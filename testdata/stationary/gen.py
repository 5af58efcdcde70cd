# usage: python3 gen.py SEED DIR  (a: seed 7, the first eight series; b: seed 11, all twelve)
import random, math, sys, os
random.seed(int(sys.argv[1])); out=sys.argv[2]
N=800
def w(n,xs): open(os.path.join(out,n+'.txt'),'w').write('\n'.join('%.6g'%x for x in xs)+'\n')
z=0; xs=[]
for i in range(N): z=0.8*z+random.gauss(0,1); xs.append(10+3*math.sin(2*math.pi*i/12)+z)
w('s1_ar8_season',xs)
z=0; xs=[]
for i in range(N): z=0.5*z+random.gauss(0,1); xs.append(50+z)
w('s2_ar5',xs)
a=b=0; xs=[]
for i in range(N): a,b=1.5*a-0.75*b+random.gauss(0,1),a; xs.append(100+a)
w('s3_ar2cycle',xs)
z=100; xs=[]
for i in range(N): z+=random.gauss(0,1); xs.append(z)
w('s4_rw',xs)
z=0; xs=[]
for i in range(N): z=0.6*z+random.gauss(0,1); xs.append(20+0.05*i+z)
w('s5_trend_ar',xs)
z=0; xs=[]
for i in range(N): z=0.95*z+random.gauss(0,1); xs.append(20+2*math.sin(2*math.pi*i/12)+z)
w('s6_ar95_season',xs)
z=0; e0=0; xs=[]
for i in range(N): e=random.gauss(0,1); z=0.9*z+e-0.5*e0; e0=e; xs.append(z)
w('s7_arma11',xs)
l=50; xs=[]
for i in range(N): l+=random.gauss(0,0.5); xs.append(l+random.gauss(0,1))
w('s8_locallevel',xs)
# more kinds: sensor-like AR(1) 0.9 with daily (24) season, AR(2) complex, ARMA(2,1), seasonal random walk
z=0; xs=[]
for i in range(N): z=0.9*z+random.gauss(0,1); xs.append(30+5*math.sin(2*math.pi*i/24)+z)
w('s9_ar9_season24',xs)
a=b=0; xs=[]
for i in range(N): a,b=0.6*a+0.3*b+random.gauss(0,1),a; xs.append(5+a)
w('s10_ar2real',xs)
s=[0]*12; xs=[]
for i in range(N): s[i%12]+=random.gauss(0,0.5); xs.append(50+s[i%12]+random.gauss(0,1))
w('s11_seasonal_rw',xs)
z=0; xs=[]
for i in range(N): z=0.7*z+random.gauss(0,1); xs.append(max(0.1, 8+z+ (3 if (i//50)%2 else 0)))
w('s12_regimes',xs)
