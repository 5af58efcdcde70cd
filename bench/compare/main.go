// Command compare runs streamd and R's forecast package (or, in the krlst
// suite, KAFBOX's KRLS-T in Octave) on the same benchmark data with the same
// protocol, in one run, and prints one markdown table per suite (issue 16's
// and issue 17's acceptance benchmarks). See README.md in this directory.
//
//	go run ./bench/compare [flags] nn3|eunite|coldstart|classic|datasets|quarterly|short|glitch|load|krlst|cost|santafe|all
package main

import (
	"bytes"
	"context"
	"embed"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

//go:embed *.R
var rScripts embed.FS

const usage = `Usage: go run ./bench/compare [flags] SUITE

Suites:
  nn3        NN3 data set A: 111 monthly series, 18-step iterated forecasts;
             streamd (default configuration) against auto.arima, ets, thetaf,
             their combination and snaive
  eunite     EUNITE 2001: the 31 daily maximum loads of January 1999 from
             1997-1998, with holiday and temperature inputs
  coldstart  prequential one-step forecasts of every NN3 training series from
             its first values (streamd only, against the naive forecast)
  krlst      prequential one-step on Santa Fe, Lorenz and Mackey-Glass at
             equal budget M: streamd against KRLS-T (KAFBOX, in Octave)
  cost       streamd's per-sample cost on Santa Fe with fixed
             hyperparameters at each M of -m (the online path only)
  classic    R's classic data sets (AirPassengers, co2, lynx, …): iterated
             forecasts from several origins each, streamd (defaults)
             against auto.arima, ets, thetaf, their combination and snaive
  datasets   17 more of R's series (austres, Nile, wineind, …: every one of
             datasets and forecast under 500 values without NAs that classic
             lacks), four origins a horizon apart each, as classic
  quarterly  12 quarterly series (R's quarterly ones and monthly ones summed
             over quarters), a year ahead from four origins each (three for
             the two of 24 quarters), as classic
  short      the first 12 values of every NN3 series (-short-train), 6-step
             iterated forecasts (-short-horizon): streamd (defaults)
             against R as in nn3
  glitch     nn3's streamd forecasts with and without one corrupt value
             (× 10⁴) in each series (streamd only)
  load       EUNITE's half-hourly loads of 1997-1998, day-ahead from 28
             midnights over 1998: streamd (defaults; config/load.yaml's calendar)
             against stlf (two seasons) and the seasonal naive forecasts
  santafe    the Santa Fe laser (streamd only): 100 steps iterated from
             point 1000 (config/santafe.yaml, --tune, the defaults at three
             working-set seeds), the defaults' 100-step forecasts from many
             origins over the whole record, and their one-step predictions
  all        nn3, eunite, coldstart and classic, in this order (not krlst:
             Octave)

Flags:
`

type env struct {
	repo, data, out string
	bin             string // the streamd binary
	rscript         string
	scripts         string // directory the embedded R scripts were written to
	euniteConfig    string
	timeout         time.Duration
	jobs            int
	holdout         int  // nn3: score the training columns' last values instead of the test
	dated           bool // nn3, short, classic, datasets, quarterly: streamd reads each series with its times (writeDated)
	// short: each NN3 series' first shortTrain values, forecast
	// shortHorizon steps (cutShort)
	shortTrain, shortHorizon int
	krlstOpts                krlstOpts
	stdout, stderr           io.Writer
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	e := &env{stdout: stdout, stderr: stderr}
	fs.StringVar(&e.repo, "repo", "", "the streamd module `DIR` (default: the enclosing directory with its go.mod)")
	fs.StringVar(&e.data, "data", "", "benchmark data `DIR` with nn3/, eunite/ and santafe/ (default: REPO/../shared/data)")
	fs.StringVar(&e.out, "out", filepath.Join(os.TempDir(), "streamd-compare"), "output `DIR` for the per-series details (one subdirectory per suite)")
	fs.StringVar(&e.bin, "streamd", "", "use this streamd `BINARY` instead of building ./cmd/streamd")
	fs.StringVar(&e.rscript, "rscript", "Rscript", "the Rscript `COMMAND`")
	fs.StringVar(&e.euniteConfig, "eunite-config", "config/eunite.yaml", "eunite: streamd configuration `FILE` (relative to REPO); when missing, only the minimal inputs-only configuration runs")
	fs.DurationVar(&e.timeout, "timeout", 10*time.Minute, "limit of each streamd run (R scripts: 6× this)")
	fs.IntVar(&e.jobs, "j", 1, "streamd runs in parallel (wall times are then summed over runs, not elapsed)")
	fs.IntVar(&e.holdout, "nn3-holdout", 0, "nn3: forecast each training column's last `H` values (18: the training-only split) from the rest, instead of the test values from all of it")
	fs.BoolVar(&e.dated, "dated", false, "nn3, short, classic, datasets, quarterly: streamd reads each series with times (NN3 monthly from 2000-01, R's series from their start), not as bare values")
	fs.IntVar(&e.shortTrain, "short-train", shortTrain, "short: train on each NN3 series' first `N` values")
	fs.IntVar(&e.shortHorizon, "short-horizon", shortHorizon, "short: forecast `H` steps, scored on the training column's next H values")
	e.krlstOpts.register(fs)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() < 1 {
		fs.Usage()
		return errors.New("give a suite: nn3, eunite, coldstart, classic, datasets, quarterly, short, glitch, load, krlst, cost, santafe or all")
	}
	suite := fs.Arg(0)
	if err := fs.Parse(fs.Args()[1:]); err != nil { // flags may also follow the suite
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var suites []string
	switch suite {
	case "nn3", "eunite", "coldstart", "classic", "datasets", "quarterly", "short", "glitch", "load", "krlst", "cost", "santafe":
		suites = []string{suite}
	case "all":
		suites = []string{"nn3", "eunite", "coldstart", "classic"}
	default:
		return fmt.Errorf("unknown suite %q: nn3, eunite, coldstart, classic, datasets, quarterly, short, glitch, load, krlst, cost, santafe or all", suite)
	}
	if e.jobs < 1 {
		return fmt.Errorf("-j must be ≥ 1 (got %d)", e.jobs)
	}
	if e.holdout != 0 && e.holdout != nn3Horizon {
		return fmt.Errorf("-nn3-holdout must be 0 or %d, the horizon (got %d)", nn3Horizon, e.holdout)
	}
	if e.shortTrain < 1 || e.shortHorizon < 1 {
		return fmt.Errorf("-short-train and -short-horizon must be ≥ 1 (got %d and %d)", e.shortTrain, e.shortHorizon)
	}
	if err := e.setup(ctx, suites); err != nil {
		return err
	}
	defer os.RemoveAll(e.scripts)
	for i, s := range suites {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		var err error
		switch s {
		case "nn3":
			err = e.nn3(ctx)
		case "eunite":
			err = e.eunite(ctx)
		case "coldstart":
			err = e.coldstart(ctx)
		case "classic":
			err = e.classic(ctx)
		case "datasets":
			err = e.datasets(ctx)
		case "quarterly":
			err = e.quarterly(ctx)
		case "short":
			err = e.short(ctx)
		case "glitch":
			err = e.glitch(ctx)
		case "load":
			err = e.load(ctx)
		case "krlst":
			err = e.krlst(ctx)
		case "cost":
			err = e.cost(ctx)
		case "santafe":
			err = e.santafe(ctx)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// setup resolves the directories, builds streamd once and writes the R
// scripts to a temporary directory.
func (e *env) setup(ctx context.Context, suites []string) error {
	if e.repo == "" {
		var err error
		if e.repo, err = findRepo(); err != nil {
			return err
		}
	}
	abs, err := filepath.Abs(e.repo)
	if err != nil {
		return err
	}
	e.repo = abs
	if e.data == "" {
		e.data = filepath.Join(e.repo, "..", "shared", "data")
	}
	if !filepath.IsAbs(e.euniteConfig) {
		e.euniteConfig = filepath.Join(e.repo, e.euniteConfig)
	}
	if err := os.MkdirAll(e.out, 0o755); err != nil {
		return err
	}
	if e.scripts, err = os.MkdirTemp("", "streamd-compare-"); err != nil {
		return err
	}
	for _, name := range []string{"nn3.R", "eunite.R", "datasets.R", "load.R"} {
		b, err := rScripts.ReadFile(name)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(e.scripts, name), b, 0o644); err != nil {
			return err
		}
	}
	if e.bin == "" {
		e.bin = filepath.Join(e.scripts, "streamd")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", e.bin, "./cmd/streamd")
		cmd.Dir = e.repo
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build ./cmd/streamd in %s: %v\n%s", e.repo, err, out.String())
		}
		fmt.Fprintf(e.stderr, "compare: built streamd in %.1f s\n", time.Since(start).Seconds())
	}
	if v, err := exec.CommandContext(ctx, e.bin, "version").CombinedOutput(); err == nil {
		fmt.Fprintf(e.stderr, "compare: %s", firstLine(string(v))+"\n")
	}
	if slices.ContainsFunc(suites, func(s string) bool {
		return s == "nn3" || s == "eunite" || s == "classic" || s == "datasets" || s == "quarterly" || s == "short" || s == "load"
	}) {
		out, err := exec.CommandContext(ctx, e.rscript, "-e", `suppressPackageStartupMessages(library(forecast)); cat(format(packageVersion("forecast")))`).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s cannot load the forecast package (Debian: apt-get install r-cran-forecast): %v\n%s", e.rscript, err, out)
		}
		fmt.Fprintf(e.stderr, "compare: R forecast %s\n", strings.TrimSpace(lastLine(string(out))))
	}
	return nil
}

// findRepo walks up from the working directory to the go.mod of the streamd
// module.
func findRepo() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(b, []byte("module github.com/streamd/streamd\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the streamd module: give -repo")
		}
		dir = parent
	}
}

// runResult is the outcome of one command.
type runResult struct {
	Stdout, Stderr string
	Elapsed        time.Duration
	Err            error
}

// reason is a one-line account of a failed run.
func (r runResult) reason() string {
	if r.Err == nil {
		return ""
	}
	msg := strings.TrimSpace(r.Stderr)
	if msg == "" {
		return r.Err.Error()
	}
	// The last line of stderr is the error; earlier ones are notes.
	return lastLine(msg)
}

// streamd runs the streamd binary with args.
func (e *env) streamd(ctx context.Context, args ...string) runResult {
	return e.command(ctx, e.timeout, e.bin, args...)
}

// rscript runs one of the R scripts.
func (e *env) rscriptRun(ctx context.Context, script string, args ...string) runResult {
	return e.command(ctx, 6*e.timeout, e.rscript, append([]string{filepath.Join(e.scripts, script)}, args...)...)
}

func (e *env) command(ctx context.Context, limit time.Duration, name string, args ...string) runResult {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := runResult{Stdout: out.String(), Stderr: errb.String(), Elapsed: time.Since(start), Err: err}
	if ctx.Err() == context.DeadlineExceeded {
		r.Err = fmt.Errorf("timed out after %s", limit)
		r.Stderr += "\n" + r.Err.Error()
	}
	return r
}

// parallel runs f(i) for i in [0, n) on e.jobs goroutines.
func (e *env) parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(e.jobs, max(n, 1)) {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// writeValues writes one value per line.
func writeValues(path string, y []float64) error {
	var b strings.Builder
	for _, v := range y {
		b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		b.WriteByte('\n')
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// writeCSV writes a header and rows.
func writeCSV(path string, header []string, rows [][]string) error {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(header)
	w.WriteAll(rows) // flushes
	if err := w.Error(); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// readCSVFile reads every row of the CSV file at path.
func readCSVFile(path string) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rows, nil
}

// readRTimes reads the method,seconds file an R script writes.
func readRTimes(path string) (map[string]float64, error) {
	rows, err := readCSVFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, r := range rows[min(1, len(rows)):] {
		if len(r) == 2 {
			out[r[0]] = parseRNum(r[1])
		}
	}
	return out, nil
}

// readRErrors reads the method,series,message file an R script writes, as
// method → series → message.
func readRErrors(path string) (map[string]map[string]string, error) {
	rows, err := readCSVFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]string{}
	for _, r := range rows[min(1, len(rows)):] {
		if len(r) == 3 {
			if out[r[0]] == nil {
				out[r[0]] = map[string]string{}
			}
			out[r[0]][r[1]] = strings.TrimSpace(r[2])
		}
	}
	return out, nil
}

// markdownTable renders a header and rows as a markdown table; columns after
// the first are right-aligned.
func markdownTable(header []string, rows [][]string) string {
	width := make([]int, len(header))
	for i, h := range header {
		width[i] = len([]rune(h))
	}
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	var b strings.Builder
	line := func(cells []string) {
		b.WriteString("|")
		for i, c := range cells {
			pad := strings.Repeat(" ", width[i]-len([]rune(c)))
			if i == 0 {
				b.WriteString(" " + c + pad + " |")
			} else {
				b.WriteString(" " + pad + c + " |")
			}
		}
		b.WriteString("\n")
	}
	line(header)
	b.WriteString("|")
	for i := range header {
		if i == 0 {
			b.WriteString(" " + strings.Repeat("-", width[i]) + " |")
		} else {
			b.WriteString(" " + strings.Repeat("-", width[i]-1) + ": |")
		}
	}
	b.WriteString("\n")
	for _, r := range rows {
		line(r)
	}
	return b.String()
}

// groupReasons summarises failures as "count × message [series …]": the
// messages that differ only in words with a digit (numbers, the data file's
// name) form one group, shown with the message of its first series (by
// name).
func groupReasons(fails map[string]string) []string {
	type group struct {
		msg    string
		series []string
	}
	digits := regexp.MustCompile(`[^\s:]*[0-9][^\s:]*`) // words with a digit: numbers, file names
	groups := map[string]*group{}
	keys := make([]string, 0, len(fails))
	for s := range fails {
		keys = append(keys, s)
	}
	sort.Strings(keys) // each group's message is that of its first series
	for _, s := range keys {
		msg := fails[s]
		key := digits.ReplaceAllString(msg, "N")
		g := groups[key]
		if g == nil {
			g = &group{msg: msg}
			groups[key] = g
		}
		g.series = append(g.series, s)
	}
	var out []*group
	for _, g := range groups {
		sort.Strings(g.series)
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i].series) != len(out[j].series) {
			return len(out[i].series) > len(out[j].series)
		}
		return out[i].series[0] < out[j].series[0]
	})
	var lines []string
	for _, g := range out {
		lines = append(lines, fmt.Sprintf("%d × %s [%s]", len(g.series), g.msg, strings.Join(g.series, " ")))
	}
	return lines
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[i+1:])
	}
	return s
}

// Formatting helpers: "—" for NaN.
func f2(x float64) string { return fmtFloat(x, 2) }
func f3(x float64) string { return fmtFloat(x, 3) }

func fmtFloat(x float64, prec int) string {
	if !isFinite(x) {
		return "—"
	}
	return strconv.FormatFloat(x, 'f', prec, 64)
}

func fmtSeconds(s float64) string {
	if !isFinite(s) {
		return "—"
	}
	return fmt.Sprintf("%.1f s", s)
}

func fmtCoverage(covered, n int) string {
	if n == 0 {
		return "—"
	}
	return fmt.Sprintf("%.3f (%d/%d)", float64(covered)/float64(n), covered, n)
}
