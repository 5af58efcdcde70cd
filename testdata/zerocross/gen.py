# Writes zc00..zc11 (see README.md). python3 gen.py
import random, math, datetime
R = random.Random(11)
def w(name, ys, times=None):
    with open(name, 'w') as f:
        if times:
            f.write('t,y\n')
            for t, y in zip(times, ys): f.write('%s,%.6f\n' % (t, y))
        else:
            for y in ys: f.write('%.6f\n' % y)
for k in range(12):
    kind = k % 3
    n = [240, 400, 1200][kind]
    s = [12, 7, 24][kind]
    amp = R.uniform(2, 10); noise = R.uniform(0.5, 3); trend = R.uniform(-0.02, 0.02); phi = R.uniform(0, 0.7)
    e = 0; ys = []
    shape = [math.sin(2*math.pi*i/s + R.uniform(0, 0.3)) + (0.5*math.cos(4*math.pi*i/s) if k % 2 else 0) for i in range(s)]
    for i in range(n):
        e = phi*e + R.gauss(0, noise)
        ys.append(amp*shape[i % s] + trend*i + e + R.uniform(-1, 1)*0)
    if kind == 0: w('zc%02d.txt' % k, ys)
    elif kind == 1:
        d0 = datetime.date(2021, 1, 4); w('zc%02d.csv' % k, ys, [(d0 + datetime.timedelta(days=i)).isoformat() for i in range(n)])
    else:
        t0 = datetime.datetime(2024, 1, 1); w('zc%02d.csv' % k, ys, [(t0 + datetime.timedelta(hours=i)).strftime('%Y-%m-%dT%H:%M:%SZ') for i in range(n)])
