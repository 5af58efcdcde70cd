package main

// Tests that keep the reference pages (docs/) and the operations kit
// (deploy/) true to the code: the configuration keys and defaults, the
// exported metrics, the metric names the dashboard and alerting rules query,
// and the links between the pages.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
	"go.yaml.in/yaml/v3"

	"github.com/streamd/streamd/internal/daemon"
	"github.com/streamd/streamd/internal/reject"
)

// repoPath is path relative to the repository root (tests run in
// cmd/streamd).
func repoPath(path string) string { return filepath.Join("..", "..", filepath.FromSlash(path)) }

// family is one metric family of the daemon's /metrics.
type family struct {
	typ    string   // counter, gauge, histogram, summary, untyped
	labels []string // label names of its samples, sorted, without le and quantile
}

// exportedMetrics opens the daemon as `streamd run` does with the default
// configuration (state topic included), on an in-process broker, and reads
// its /metrics: the families of the registry the daemon serves, those
// registered at Open among them.
func exportedMetrics(t *testing.T) map[string]*family {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "series", "forecasts", "series-dlq"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cfg := DefaultConfig()
	cfg.Kafka.Brokers = c.ListenAddrs()
	cfg.HTTP.Listen = "127.0.0.1:0"
	dc, err := cfg.daemon()
	if err != nil {
		t.Fatal(err)
	}
	dc.Transport = &kafka.Transport{}
	d, err := daemon.Open(dc)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get("http://" + d.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d %v", resp.StatusCode, err)
	}
	fams, err := parseExposition(body)
	if err != nil {
		t.Fatal(err)
	}
	if len(fams) == 0 {
		t.Fatal("/metrics has no metric families")
	}
	return fams
}

// parseExposition reads the families (# TYPE lines) of Prometheus' text
// format and the label names of their samples.
func parseExposition(b []byte) (map[string]*family, error) {
	fams := map[string]*family{}
	var names []string // families, longest first, to match samples to them
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			f := strings.Fields(rest)
			if len(f) != 2 {
				return nil, fmt.Errorf("bad TYPE line %q", line)
			}
			fams[f[0]] = &family{typ: f[1]}
			names = append(names, f[0])
			sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, labels, _ := strings.Cut(strings.Fields(line)[0], "{")
		var fam *family
		for _, n := range names {
			if name == n || strings.HasPrefix(name, n+"_") {
				fam = fams[n]
				break
			}
		}
		if fam == nil {
			return nil, fmt.Errorf("sample %q has no # TYPE", line)
		}
		for _, kv := range strings.Split(strings.TrimSuffix(labels, "}"), ",") {
			k, _, ok := strings.Cut(kv, "=")
			if ok && k != "le" && k != "quantile" && !slices.Contains(fam.labels, k) {
				fam.labels = append(fam.labels, k)
				slices.Sort(fam.labels)
			}
		}
	}
	return fams, sc.Err()
}

// seriesNames are the names a PromQL query can select for the families:
// a histogram's _bucket, _sum and _count, a summary's own name, _sum and
// _count, any other family's own name.
func seriesNames(fams map[string]*family) map[string]bool {
	out := map[string]bool{}
	for n, f := range fams {
		switch f.typ {
		case "histogram":
			out[n+"_bucket"], out[n+"_sum"], out[n+"_count"] = true, true, true
		case "summary":
			out[n], out[n+"_sum"], out[n+"_count"] = true, true, true
		default:
			out[n] = true
		}
	}
	return out
}

var (
	promStrings  = regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|`[^`]*`")
	promBraces   = regexp.MustCompile(`\{[^{}]*\}`)
	promBrackets = regexp.MustCompile(`\[[^\[\]]*\]`)
	// by (…), without (…), on (…), ignoring (…), group_left (…),
	// group_right (…): label lists.
	promLabelLists = regexp.MustCompile(`(?i)\b(by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)`)
	// Grafana's label_values(metric, label) template query.
	grafanaLabelValues = regexp.MustCompile(`label_values\(\s*([^,()]*?)\s*,\s*[A-Za-z_]\w*\s*\)`)
	grafanaVars        = regexp.MustCompile(`\$\{[^}]*\}|\$\w+`)
	promTokens         = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*|[0-9][0-9A-Za-z_.]*|\S`)
	promKeywords       = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true,
		"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
		"inf": true, "nan": true, "atan2": true}
)

// metricNames returns the metric names a PromQL expression (or a Grafana
// query with its $variables) selects: identifiers that are not functions or
// aggregations (followed by "("), keywords, label names (in matchers or
// label lists), strings, durations or numbers.
func metricNames(expr string) []string {
	s := grafanaLabelValues.ReplaceAllString(expr, "$1")
	s = promStrings.ReplaceAllString(s, `""`)
	s = grafanaVars.ReplaceAllString(s, "5m")
	for _, re := range []*regexp.Regexp{promBraces, promBrackets, promLabelLists} {
		s = re.ReplaceAllString(s, " ")
	}
	toks := promTokens.FindAllString(s, -1)
	var names []string
	for i, tok := range toks {
		c := tok[0]
		if !(c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') || promKeywords[strings.ToLower(tok)] {
			continue
		}
		if i+1 < len(toks) && toks[i+1] == "(" {
			continue // a function or an aggregation
		}
		names = append(names, tok)
	}
	return names
}

func TestMetricNames(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{`rate(streamd_input_records_total[5m])`, []string{"streamd_input_records_total"}},
		{`histogram_quantile(0.99, sum by (le, instance) (rate(streamd_forecast_latency_seconds_bucket{job="streamd"}[$__rate_interval])))`,
			[]string{"streamd_forecast_latency_seconds_bucket"}},
		{`sum without (reason) (rate(streamd_input_rejected_total{reason!~"a|b"}[10m])) / on (instance) group_left () rate(streamd_input_records_total[10m] offset 1h) > 0.01`,
			[]string{"streamd_input_rejected_total", "streamd_input_records_total"}},
		{`absent(streamd_build_info{job="streamd"}) and bool 1e3`, []string{"streamd_build_info"}},
		{`label_values(streamd_build_info, instance)`, []string{"streamd_build_info"}},
		{`process_resident_memory_bytes{instance=~"${instance}"} / go_gc_gomemlimit_bytes`,
			[]string{"process_resident_memory_bytes", "go_gc_gomemlimit_bytes"}},
		{`increase(stremd_typo_total[1h]) > 0`, []string{"stremd_typo_total"}},
	} {
		if got := metricNames(tc.expr); !slices.Equal(got, tc.want) {
			t.Errorf("metricNames(%q) = %q, want %q", tc.expr, got, tc.want)
		}
	}
}

// dashboardQueries returns every query of a Grafana dashboard: the targets'
// expr and the template variables' query (a string, or an object with one).
func dashboardQueries(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			switch s := x.(type) {
			case string:
				if k == "expr" {
					out = append(out, s)
				}
				if k == "query" && v["type"] == "query" {
					out = append(out, s)
				}
			case map[string]any:
				if q, ok := s["query"].(string); ok && k == "query" {
					out = append(out, q)
				}
			}
			out = append(out, dashboardQueries(x)...)
		}
	case []any:
		for _, x := range v {
			out = append(out, dashboardQueries(x)...)
		}
	}
	return out
}

// ruleFile is the part of a Prometheus rule file the tests read.
type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Record string `yaml:"record"`
			Alert  string `yaml:"alert"`
			Expr   string `yaml:"expr"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

const (
	dashboardFile = "deploy/grafana/streamd.json"
	rulesFile     = "deploy/prometheus/streamd-rules.yml"
	rulesTestFile = "deploy/prometheus/streamd-rules.test.yml"
)

// The dashboard and the alerting rules query only metrics the daemon
// exports (or the rules record): a renamed metric fails here rather than
// as an empty panel or an alert that can never fire.
func TestDeployQueriesExportedMetrics(t *testing.T) {
	exported := seriesNames(exportedMetrics(t))

	b, err := os.ReadFile(repoPath(rulesFile))
	if err != nil {
		t.Fatal(err)
	}
	var rules ruleFile
	if err := yaml.Unmarshal(b, &rules); err != nil {
		t.Fatalf("%s: %v", rulesFile, err)
	}
	known := cloneSet(exported)
	alerts := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				known[r.Record] = true
			}
			if r.Alert != "" {
				alerts++
			}
		}
	}
	if alerts == 0 {
		t.Fatalf("%s: no alerts", rulesFile)
	}
	check := func(file, query string) int {
		names := metricNames(query)
		if len(names) == 0 {
			t.Errorf("%s: query %q selects no metric", file, query)
		}
		for _, n := range names {
			if !known[n] {
				t.Errorf("%s: %q queries %s, which the daemon does not export", file, query, n)
			}
		}
		return len(names)
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			check(rulesFile, r.Expr)
		}
	}

	b, err = os.ReadFile(repoPath(dashboardFile))
	if err != nil {
		t.Fatal(err)
	}
	var dash any
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	queries := dashboardQueries(dash)
	if len(queries) < 10 {
		t.Fatalf("%s: found %d queries, want the dashboard's panels", dashboardFile, len(queries))
	}
	for _, q := range queries {
		check(dashboardFile, q)
	}
}

// cloneSet copies a set.
func cloneSet(m map[string]bool) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// toolPath finds an external tool of the operations kit. CI installs it
// (.ci/run), and there its absence fails the test; elsewhere it skips.
func toolPath(t *testing.T, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed (.ci/run installs the Debian package %s)", name, pkg)
		}
		t.Skipf("%s not installed (Debian package %s); CI runs this test", name, pkg)
	}
	return p
}

// The alerting rules are valid for Prometheus and fire as their unit tests
// (deploy/prometheus/streamd-rules.test.yml) say.
func TestPromtoolRules(t *testing.T) {
	promtool := toolPath(t, "promtool", "prometheus")
	for _, args := range [][]string{
		{"check", "rules", repoPath(rulesFile)},
		{"test", "rules", repoPath(rulesTestFile)},
	} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// mdCells returns the cells of the Markdown table rows of doc whose first
// cell is a `code` span, keyed by that span.
func mdCells(t *testing.T, doc string) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(repoPath(doc))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		key := strings.Trim(cells[0], "`")
		if _, dup := rows[key]; dup {
			t.Errorf("%s: %s documented twice", doc, key)
		}
		rows[key] = cells
	}
	return rows
}

// docs/metrics.md has a row for every streamd_* family the daemon exports
// and none for a family it does not, with its type and labels; every other
// family comes from the Go and process collectors the page describes.
func TestMetricsDocMatchesExported(t *testing.T) {
	const doc = "docs/metrics.md"
	fams := exportedMetrics(t)
	rows := mdCells(t, doc)
	for name, f := range fams {
		if !strings.HasPrefix(name, "streamd_") {
			if !strings.HasPrefix(name, "go_") && !strings.HasPrefix(name, "process_") {
				t.Errorf("%s: exported family %s is neither streamd_*, go_* nor process_*", doc, name)
			}
			continue
		}
		cells, ok := rows[name]
		if !ok {
			t.Errorf("%s: no row for %s (%s)", doc, name, f.typ)
			continue
		}
		if len(cells) != 4 {
			t.Errorf("%s: row of %s has %d cells, want name | type | labels | meaning", doc, name, len(cells))
			continue
		}
		if cells[1] != f.typ {
			t.Errorf("%s: %s is a %s, the page says %q", doc, name, f.typ, cells[1])
		}
		wantLabels := "—"
		if len(f.labels) > 0 {
			wantLabels = "`" + strings.Join(f.labels, "`, `") + "`"
		}
		if cells[2] != wantLabels {
			t.Errorf("%s: %s has labels %s, the page says %q", doc, name, wantLabels, cells[2])
		}
	}
	for name := range rows {
		if fams[name] == nil {
			t.Errorf("%s documents %s, which the daemon does not export", doc, name)
		}
	}
}

// yamlLeaves returns the dotted path of every leaf key of a YAML mapping
// with its value as the configuration page shows it: a scalar as written
// (`""` for the empty string), a sequence as [a, b].
func yamlLeaves(n *yaml.Node, prefix string, out map[string]string) {
	if n.Kind == yaml.DocumentNode {
		yamlLeaves(n.Content[0], prefix, out)
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, n.Content[i+1]
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		switch v.Kind {
		case yaml.MappingNode:
			yamlLeaves(v, path, out)
		case yaml.SequenceNode:
			var items []string
			for _, it := range v.Content {
				items = append(items, it.Value)
			}
			out[path] = "[" + strings.Join(items, ", ") + "]"
		default:
			if v.Value == "" {
				out[path] = `""`
			} else {
				out[path] = v.Value
			}
		}
	}
}

// docs/configuration.md documents every key of config/default.yaml, with
// the default the file gives it, and no key the file does not have.
// Every reject reason has its row in the message reference and is listed
// with the metric it labels.
func TestRejectReasonsDocumented(t *testing.T) {
	msgs, err := os.ReadFile(repoPath("docs/messages.md"))
	if err != nil {
		t.Fatal(err)
	}
	mets, err := os.ReadFile(repoPath("docs/metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	documented := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| ").FindAllSubmatch(msgs, -1)
	rows := map[string]bool{}
	for _, m := range documented {
		rows[string(m[1])] = true
	}
	_, metricLine, _ := strings.Cut(string(mets), "`streamd_input_rejected_total`")
	metricLine, _, _ = strings.Cut(metricLine, "\n")
	for _, r := range reject.Reasons {
		if !rows[string(r)] {
			t.Errorf("docs/messages.md has no row for reject reason %s", r)
		}
		if !strings.Contains(metricLine, "`"+string(r)+"`") {
			t.Errorf("docs/metrics.md does not list %s with streamd_input_rejected_total", r)
		}
	}
}

func TestConfigurationDocMatchesDefaultYAML(t *testing.T) {
	const doc = "docs/configuration.md"
	b, err := os.ReadFile(repoPath("config/default.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	yamlLeaves(&root, "", keys)
	if len(keys) < 20 {
		t.Fatalf("config/default.yaml: only %d keys read", len(keys))
	}
	rows := mdCells(t, doc)
	for key, def := range keys {
		cells, ok := rows[key]
		if !ok {
			t.Errorf("%s: no row for %s (default %s)", doc, key, def)
			continue
		}
		if len(cells) != 3 {
			t.Errorf("%s: row of %s has %d cells, want key | default | meaning", doc, key, len(cells))
			continue
		}
		if want := "`" + def + "`"; cells[1] != want {
			t.Errorf("%s: %s defaults to %s in config/default.yaml, the page says %s", doc, key, want, cells[1])
		}
	}
	for key := range rows {
		if _, ok := keys[key]; !ok {
			t.Errorf("%s documents %s, which config/default.yaml does not have", doc, key)
		}
	}
}

// mdLink is a Markdown link's target.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// Every relative link of the README and the reference pages names a file
// of the repository; the README gives the two set-up commands and links
// every page of docs/; .ci/run runs the README's test command.
func TestDocsLinksAndCommands(t *testing.T) {
	pages, _ := filepath.Glob(repoPath("docs/*.md"))
	if len(pages) < 7 {
		t.Fatalf("docs/ has %d pages", len(pages))
	}
	readme, err := os.ReadFile(repoPath("README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(pages, repoPath("README.md")) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(p), filepath.FromSlash(target))); err != nil {
				t.Errorf("%s: link %s: %v", p, m[1], err)
			}
		}
	}
	for _, p := range pages {
		if link := "docs/" + filepath.Base(p); !bytes.Contains(readme, []byte("("+link+")")) {
			t.Errorf("README.md does not link %s", link)
		}
	}
	for _, cmd := range []string{"    go run ./cmd/streamd demo\n", "    go test ./...\n"} {
		if !bytes.Contains(readme, []byte(cmd)) {
			t.Errorf("README.md lacks the set-up command %q", strings.TrimSpace(cmd))
		}
	}
	ci, err := os.ReadFile(repoPath(".ci/run"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^go test -count=1 \./\.\.\.$`).Match(ci) {
		t.Error(".ci/run does not run go test -count=1 ./...")
	}
}

// docs/backtest.md defines every score of the report (the json names of
// metrics, by reflection): a field added to the report without its
// definition fails here.
func TestBacktestDocDefinesEveryScore(t *testing.T) {
	doc, err := os.ReadFile(repoPath("docs/backtest.md"))
	if err != nil {
		t.Fatal(err)
	}
	typ := reflect.TypeFor[metrics]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if !bytes.Contains(doc, []byte("`"+name+"`")) {
			t.Errorf("docs/backtest.md does not define %q", name)
		}
	}
}
