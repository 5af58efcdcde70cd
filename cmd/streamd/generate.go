package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/streamd/streamd/internal/synth"
)

// generateCommand writes one of the synthetic benchmark series of
// ../shared/data/README.md as CSV, so that backtests on generated data are
// reproducible from a command line.
type generateCommand struct{}

const generateUsage = `Usage: streamd generate KIND [flags] > FILE.csv

Writes a synthetic benchmark series as CSV with a header, deterministically
from --seed. Kinds and their columns:

  mackey-glass  t,y     Mackey–Glass (--tau, default 17), one sample per time unit
  lorenz        t,y     x coordinate of the Lorenz system, every 0.05 time units
  chua          t,y     x coordinate of Chua's double scroll (book eq. 8.14–8.15)
  sinc          x,y,f   y = sin(x)/x + noise at uniform x in [-10, 10]; f is the true value
  hammerstein   t,y,u   a control loop's plant: y_t = 0.7y_{t-1} + 0.2y_{t-2} + tanh(u_{t-d}),
                        the set point u moved every --hold samples (and at random on 2 %
                        of the others) to a level in [-2, 2]; d = --delay (default 1)

--noise adds Gaussian noise of that std (series kinds: as a fraction of the
series' std; sinc: absolute, default 0.1). For the series kinds, --spikes p
adds ±10 noise std to a fraction p of the samples and writes the columns
t,y,clean,spike (the series without spikes, and 1 at a spike). For sinc,
--contamination ε draws each sample's noise with variance k·noise² with
probability ε (k = --contamination-var, default 15; 225 makes the gross
errors N(0, 1.5²)), --outliers replaces that many targets by ±5, and --test N
appends N rows on an even grid of [-10, 10] whose y is the true sinc (score a
fit with --protocol iterated --train n --horizon N).

Flags:
`

func (generateCommand) Run(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 5000, "number of samples")
	seed := fs.Uint64("seed", 1, "random seed")
	noise := fs.Float64("noise", -1, "noise std (see above); default 0 for series, 0.1 for sinc")
	tau := fs.Float64("tau", 17, "Mackey–Glass delay τ")
	contam := fs.Float64("contamination", 0, "sinc: fraction ε of samples with contaminated noise")
	contamVar := fs.Float64("contamination-var", 15, "sinc: variance of the contaminated noise, in units of noise²")
	outliers := fs.Int("outliers", 0, "sinc: number of gross outliers (±5)")
	test := fs.Int("test", 0, "sinc: noise-free grid rows appended for scoring")
	spikes := fs.Float64("spikes", 0, "series kinds: fraction of samples with a ±10 noise std spike")
	delay := fs.Int("delay", 1, "hammerstein: the plant's dead time in samples")
	hold := fs.Int("hold", 20, "hammerstein: samples between the set point's scheduled moves")
	fs.Usage = func() {
		fmt.Fprint(stderr, generateUsage)
		fs.PrintDefaults()
	}
	if len(args) == 0 || len(args[0]) == 0 || args[0][0] == '-' {
		if err := parseFlags(fs, args); err != nil {
			return err
		}
		fs.Usage()
		return usageErrorf("generate: name the KIND first")
	}
	kind := args[0]
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if *n < 1 || *n > 100_000_000 {
		return usageErrorf("generate: --n must be in [1, 100000000] (got %d)", *n)
	}
	if !(*tau >= 0.1 && *tau <= 10000) {
		return usageErrorf("generate: --tau must be in [0.1, 10000] (got %g)", *tau)
	}
	if !(*noise >= 0) && *noise != -1 || math.IsInf(*noise, 0) {
		return usageErrorf("generate: --noise must be finite and ≥ 0 (got %g)", *noise)
	}
	if !(*spikes >= 0 && *spikes <= 1) {
		return usageErrorf("generate: --spikes must be in [0, 1] (got %g)", *spikes)
	}
	if *outliers < 0 || *test < 0 {
		return usageErrorf("generate: --outliers and --test must be ≥ 0 (got %d, %d)", *outliers, *test)
	}
	if *contam < 0 || *contam > 1 || !(*contamVar >= 0) {
		return usageErrorf("generate: --contamination must be in [0, 1] and --contamination-var ≥ 0 (got %g, %g)", *contam, *contamVar)
	}
	if *delay < 0 || *delay > 1000 || *hold < 1 {
		return usageErrorf("generate: --delay must be in [0, 1000] and --hold ≥ 1 (got %d, %d)", *delay, *hold)
	}
	w := bufio.NewWriter(stdout)
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 17, 64) }
	switch kind {
	case "mackey-glass", "lorenz", "chua":
		var y []float64
		switch kind {
		case "mackey-glass":
			y = synth.MackeyGlass(*n, *tau, 500)
		case "lorenz":
			y = synth.Lorenz(*n, 200)
		default:
			y = synth.Chua(*n)
		}
		std := 0.0
		if *noise > 0 {
			_, sd := meanStd(y)
			std = *noise * sd
			y = synth.AddNoise(y, std, *seed)
		}
		if *spikes <= 0 {
			fmt.Fprintln(w, "t,y")
			for i, v := range y {
				fmt.Fprintf(w, "%d,%s\n", i, f(v))
			}
			break
		}
		if std == 0 {
			return usageErrorf("generate: --spikes are sized in noise std: give --noise")
		}
		spiked, at := synth.AddSpikes(y, *spikes, 10*std, *seed)
		fmt.Fprintln(w, "t,y,clean,spike")
		for i := range y {
			flag := 0
			if at[i] {
				flag = 1
			}
			fmt.Fprintf(w, "%d,%s,%s,%d\n", i, f(spiked[i]), f(y[i]), flag)
		}
	case "hammerstein":
		u, y := synth.Hammerstein(*n, *delay, *hold, *seed)
		if *noise > 0 {
			_, sd := meanStd(y)
			y = synth.AddNoise(y, *noise*sd, *seed)
		}
		fmt.Fprintln(w, "t,y,u")
		for i := range y {
			fmt.Fprintf(w, "%d,%s,%s\n", i, f(y[i]), f(u[i]))
		}
	case "sinc":
		std := *noise
		if std < 0 {
			std = 0.1
		}
		x, y, truth := synth.NoisySinc(synth.SincOptions{N: *n, Lo: -10, Hi: 10, NoiseStd: std,
			Contamination: *contam, ContamVarFactor: *contamVar, Outliers: *outliers, OutlierValue: 5, Seed: *seed})
		fmt.Fprintln(w, "x,y,f")
		for i := range x {
			fmt.Fprintf(w, "%s,%s,%s\n", f(x[i]), f(y[i]), f(truth[i]))
		}
		for i := 0; i < *test; i++ {
			xi := -10 + 20*float64(i)/float64(max(*test-1, 1))
			fmt.Fprintf(w, "%s,%s,%s\n", f(xi), f(synth.Sinc(xi)), f(synth.Sinc(xi)))
		}
	default:
		return usageErrorf("generate: unknown kind %q (mackey-glass, lorenz, chua, sinc, hammerstein)", kind)
	}
	return w.Flush()
}

func meanStd(x []float64) (mean, std float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		std += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(std / float64(len(x)))
}
