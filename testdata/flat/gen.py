# Writes the series of README.md (python3 gen.py; deterministic).
import random

with open("flat_ramp.txt", "w") as f:
    for i in range(120):
        f.write("%g\n" % (5 + 0.5 * max(i - 79, 0)))

rng = random.Random(1)
with open("flat_walk.txt", "w") as f:
    y = 100.0
    for i in range(200):
        if i >= 60:
            y += rng.gauss(0, 0.3)
        f.write("%.4f\n" % y)

rng = random.Random(2)
with open("planned_step.csv", "w") as f:
    f.write("t,y,u\n")
    for t in range(1, 401):
        u = (1 if rng.random() < 0.3 else 0) if t <= 100 else (0 if t <= 200 else 1)
        f.write("%d,%.4f,%d\n" % (t, 50 + 10 * u + rng.gauss(0, 1), u))
