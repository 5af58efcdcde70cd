package daemon

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/streamd/streamd/internal/online"
	"github.com/streamd/streamd/internal/sink"
	"github.com/streamd/streamd/internal/source"
)

// whatIfFixture is a daemon without brokers whose directory holds series
// "s", fitted on 150 values of series(0, ·) and owned by a stand-in
// partition goroutine with a worker pool of two, and the mux of its API.
func whatIfFixture(t testing.TB, hc HTTPConfig) (*Daemon, *http.ServeMux) {
	t.Helper()
	return whatIfFixtureOf(t, hc, learnerConfig(), 150)
}

// whatIfFixtureOf is whatIfFixture with series "s" of configuration cfg
// on its first n values.
func whatIfFixtureOf(t testing.TB, hc HTTPConfig, cfg online.Config, n int) (*Daemon, *http.ServeMux) {
	t.Helper()
	reg, err := online.NewRegistry(online.RegistryConfig{Default: cfg})
	if err != nil {
		t.Fatal(err)
	}
	l, _, err := reg.Get("s")
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range series(0, n) {
		if _, err := l.Observe(online.Observation{T: int64(i + 1), Y: v}); err != nil {
			t.Fatal(err)
		}
	}
	hc.WhatIfMaxConcurrent = max(hc.WhatIfMaxConcurrent, 1)
	hc.WhatIfMaxHorizon = max(hc.WhatIfMaxHorizon, 1)
	d := &Daemon{cfg: Config{HTTP: hc}, dir: newDirectory(), whatIfSlots: make(chan struct{}, hc.WhatIfMaxConcurrent), quit: make(chan struct{}),
		metrics: newMetrics(), pool: newWorkerPool(2), whatIfs: newWhatIfLane()}
	d.whatIfs.pool = d.pool
	r := newPartitionRun(d, source.Partition{})
	r.reg = reg
	stopped := make(chan struct{})
	go func() { // the partition goroutine's part in what-if forecasts
		defer close(stopped)
		for {
			select {
			case q := <-r.reqs:
				r.request(q)
			case <-r.done.ready:
				r.completeReady()
			case <-r.catchUpReady():
				r.resumeOne()
			case <-r.gone:
				return
			}
		}
	}()
	t.Cleanup(func() {
		close(r.gone)
		<-stopped
		close(r.quit)
		d.pool.stop()
	})
	d.dir.publish(r, SeriesSummary{ID: "s", Fitted: l.Fitted(), LastT: int64(n)})
	mux := http.NewServeMux()
	d.apiRoutes(mux)
	d.webRoutes(mux)
	return d, mux
}

// slotWatch records how many what-if slots are held when the answer's
// status is written.
type slotWatch struct {
	*httptest.ResponseRecorder
	slots       chan struct{}
	heldAtWrite int
}

func (s *slotWatch) WriteHeader(code int) {
	s.heldAtWrite = len(s.slots)
	s.ResponseRecorder.WriteHeader(code)
}

func post(mux http.Handler, path, body string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("POST", path, strings.NewReader(body)))
	return rec
}

// Each way a what-if body can be wrong is a 400 with its own message; a
// forecast answers with the series' real t and the horizon's steps; the
// horizon cap, a full house (429) and shutdown (503) are answered at once.
func TestWhatIfBodiesAndLimits(t *testing.T) {
	d, mux := whatIfFixture(t, HTTPConfig{WhatIfMaxConcurrent: 1, WhatIfMaxHorizon: 50})
	seen := map[string]string{}
	for name, c := range map[string]struct {
		body string
		code int
		msg  string
	}{
		"invalid JSON":    {`{"horizon":`, 400, "want one JSON object"},
		"unknown field":   {`{"horizon":3,"horizn":4}`, 400, `unknown field "horizn"`},
		"trailing JSON":   {`{"horizon":3} {"horizon":4}`, 400, "data after the JSON object"},
		"trailing junk":   {`{"horizon":3}]`, 400, "data after the JSON object"},
		"no horizon":      {`{}`, 400, "horizon must be 1..50 (got 0)"},
		"over the cap":    {`{"horizon":51}`, 400, "horizon must be 1..50 (got 51)"},
		"extra rows":      {`{"horizon":1,"inputs":[[1],[2]]}`, 400, "2 rows for a horizon of 1"},
		"null row":        {`{"horizon":2,"inputs":[null]}`, 400, "inputs[0] is null"},
		"string horizon":  {`{"horizon":"3"}`, 400, "cannot unmarshal string"},
		"inputs, none":    {`{"horizon":2,"inputs":[[1],[2]]}`, 422, "has no inputs"},
		"not owned":       {`{"horizon":2}`, 404, "not owned"},
		"forecast":        {`{"horizon":7}`, 200, ""},
		"forecast, empty": {`{"horizon":2,"inputs":[]}`, 200, ""},
	} {
		path := "/v1/series/s/forecast"
		if name == "not owned" {
			path = "/v1/series/nope/forecast"
		}
		rec := post(mux, path, c.body)
		var got struct {
			Error string         `json:"error"`
			T     int64          `json:"t"`
			Steps []sink.Step    `json:"steps"`
			Model sink.ModelInfo `json:"model"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != c.code || !strings.Contains(got.Error, c.msg) {
			t.Errorf("%s: %d %s, want %d with %q", name, rec.Code, rec.Body.String(), c.code, c.msg)
			continue
		}
		if c.code == 400 {
			if other, dup := seen[got.Error]; dup && other != c.msg {
				t.Errorf("%s shares its message %q with another fault", name, got.Error)
			}
			seen[got.Error] = c.msg
		}
		if name == "forecast" && (got.T != 150 || len(got.Steps) != 7 || got.Steps[0].T != 151 || got.Steps[6].H != 7) {
			t.Errorf("forecast: t %d, %d steps: %s", got.T, len(got.Steps), rec.Body.String())
		}
	}
	d.whatIfSlots <- struct{}{} // a forecast under way: the house is full
	if rec := post(mux, "/v1/series/s/forecast", `{"horizon":2}`); rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
		t.Errorf("saturated: %d %s", rec.Code, rec.Body.String())
	}
	<-d.whatIfSlots
	if rec := post(mux, "/v1/series/s/forecast", `{"horizon":2}`); rec.Code != 200 {
		t.Errorf("after the slot was freed: %d %s", rec.Code, rec.Body.String())
	}
	// The slot is free again by the time the answer is written: a client
	// that sends its next request once it has read an answer meets no 429.
	sw := &slotWatch{ResponseRecorder: httptest.NewRecorder(), slots: d.whatIfSlots, heldAtWrite: -1}
	mux.ServeHTTP(sw, httptest.NewRequest("POST", "/v1/series/s/forecast", strings.NewReader(`{"horizon":2}`)))
	if sw.Code != 200 || sw.heldAtWrite != 0 {
		t.Errorf("answer %d written with %d slots held, want 200 with none", sw.Code, sw.heldAtWrite)
	}
	d.closing.Store(true)
	if rec := post(mux, "/v1/series/s/forecast", `{"horizon":2}`); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("closing: %d %s", rec.Code, rec.Body.String())
	}
}

// A young series (6 values, not fitted) is forecast by the theta method
// alone when combined: 200, every step flagged fallback, the model "none"
// with the theta method it came from; without the combination it has no
// forecast yet: 422.
func TestWhatIfOfAYoungSeries(t *testing.T) {
	for _, c := range []online.Combine{online.CombineAuto, online.CombineNone} {
		cfg := learnerConfig()
		cfg.Combine = c
		_, mux := whatIfFixtureOf(t, HTTPConfig{WhatIfMaxHorizon: 10}, cfg, 6)
		rec := post(mux, "/v1/series/s/forecast", `{"horizon":3}`)
		var got struct {
			Error string         `json:"error"`
			Steps []sink.Step    `json:"steps"`
			Model sink.ModelInfo `json:"model"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		if c == online.CombineNone {
			if rec.Code != 422 || !strings.Contains(got.Error, "not fitted") {
				t.Errorf("combine none: %d %s, want 422, not fitted", rec.Code, rec.Body.String())
			}
			continue
		}
		if rec.Code != 200 || len(got.Steps) != 3 || got.Model.Kernel != "none" || got.Model.Combine != "theta" || got.Model.Theta == nil {
			t.Fatalf("combine auto: %d %s", rec.Code, rec.Body.String())
		}
		for _, st := range got.Steps {
			if !st.Fallback || !(st.Lo <= st.Mean && st.Mean <= st.Hi) {
				t.Errorf("step %+v: want the fallback's, its band around its mean", st)
			}
		}
	}
}

// A what-if holds its series only for the copy of its model: while its
// forecast is held back (beforeWhatIf, then the lane, which the test holds
// too), the series' owner goes on observing with the Learner, and the
// answer is the forecast from the state at the copy (t = 150, not the 151
// observed meanwhile).
func TestWhatIfDoesNotHoldItsSeries(t *testing.T) {
	d, mux := whatIfFixture(t, HTTPConfig{WhatIfMaxConcurrent: 1, WhatIfMaxHorizon: 50})
	copied, forecast := make(chan struct{}), make(chan struct{})
	d.cfg.beforeWhatIf = func(string) {
		close(copied)
		<-forecast
	}
	d.whatIfs.slot <- struct{}{} // a forecast under way
	answer := make(chan *httptest.ResponseRecorder)
	go func() { answer <- post(mux, "/v1/series/s/forecast", `{"horizon":3}`) }()
	<-copied
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var lastT int64
	if err := d.onOwner(ctx, "s", func(l *online.Learner) {
		if _, err := l.Observe(online.Observation{T: 151, Y: 10}); err != nil {
			t.Error(err)
		}
		lastT = l.LastT()
	}); err != nil || lastT != 151 {
		t.Fatalf("the series was held by its what-if: %v (t %d)", err, lastT)
	}
	close(forecast)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	waitFor(ctx2, t, "the what-if to wait for the lane", func() bool { return d.whatIfs.waiting.Load() == 1 })
	<-d.whatIfs.slot
	rec := <-answer
	var got struct {
		T     int64       `json:"t"`
		Steps []sink.Step `json:"steps"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != 200 || got.T != 150 || len(got.Steps) != 3 || got.Steps[0].T != 151 {
		t.Fatalf("what-if answered %d %s, want the forecast from t = 150", rec.Code, rec.Body.String())
	}
}

// FuzzWhatIf throws bodies and paths at the API: whatever they hold, the
// answer is one of the documented statuses with a JSON body (never a 500 or
// an empty 200), and a 200 forecast has the asked horizon with finite or
// null numbers. Its seeds run with the package's tests.
func FuzzWhatIf(f *testing.F) {
	for _, s := range []struct{ method, path, body string }{
		{"POST", "/v1/series/s/forecast", `{"horizon":3}`},
		{"POST", "/v1/series/s/forecast", `{"horizon":2,"inputs":[[1],[null]]}`},
		{"POST", "/v1/series/s/forecast", `{"horizon":1e400}`},
		{"POST", "/v1/series/s/forecast", `[{"horizon":1}]`},
		{"POST", "/v1/series/%2e%2e/forecast", `{"horizon":1}`},
		{"GET", "/v1/series?limit=-1&offset=99999999999999999999&sort=rmse&order=desc", ""},
		{"GET", "/v1/series/s", ""},
		{"GET", "/v1/series/s/view", ""},
		{"GET", "/v1/series/%00%ff", ""},
	} {
		f.Add(s.method, s.path, s.body)
	}
	_, mux := whatIfFixture(f, HTTPConfig{WhatIfMaxConcurrent: 2, WhatIfMaxHorizon: 100})
	f.Fuzz(func(t *testing.T, method, path, body string) {
		if method != "GET" && method != "POST" {
			return
		}
		if !strings.HasPrefix(path, "/v1/") || strings.HasPrefix(path, "/v1/events") {
			return // the event streams do not end by themselves
		}
		req, err := http.NewRequest(method, "http://x"+path, strings.NewReader(body))
		if err != nil {
			return
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		switch rec.Code {
		case 200, 400, 404, 405, 422, 429, 503, 301, 307, 308:
		default:
			t.Fatalf("%s %s %q: %d %s", method, path, body, rec.Code, rec.Body.String())
		}
		if rec.Code >= 300 && rec.Code < 400 || rec.Code == 405 || rec.Code == 404 && !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
			return // the mux's own answers
		}
		var v map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			t.Fatalf("%s %s %q: %d, not a JSON object: %q", method, path, body, rec.Code, rec.Body.String())
		}
		if method == "POST" && rec.Code == 200 {
			var req whatIfRequest
			json.Unmarshal([]byte(body), &req)
			if steps, _ := v["steps"].([]any); len(steps) != req.Horizon {
				t.Fatalf("%q: %d steps", body, len(steps))
			}
		}
	})
}

// selfSigned returns a CA, and a certificate it signs for the names (a
// server's) or for a client (names nil).
func selfSigned(t *testing.T, ca *tls.Certificate, names ...string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "streamd test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: names,
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	parent, signer := tmpl, any(key)
	if ca == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.KeyUsage = true, true, x509.KeyUsageCertSign|x509.KeyUsageDigitalSignature
	} else {
		parent, signer = ca.Leaf, ca.PrivateKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

// The HTTP server over TLS with authentication, to a real TLS client:
// /healthz answers anyone; every other route (the API, the view, /readyz,
// /metrics) answers 401 without credentials, and 200 with the bearer token
// or with a client certificate the configured CA signed (one another CA
// signed is refused); plain HTTP is not served.
func TestHTTPTLSAndAuth(t *testing.T) {
	c := testCluster(t, 1, "series", "forecasts", "dlq")
	ca := selfSigned(t, nil)
	server, client, stranger := selfSigned(t, &ca, "localhost"), selfSigned(t, &ca), selfSigned(t, nil)
	pool := x509.NewCertPool()
	pool.AddCert(ca.Leaf)
	cfg := testConfig(c.ListenAddrs())
	cfg.HTTP = HTTPConfig{Token: "s3cret", TLS: &tls.Config{Certificates: []tls.Certificate{server}, ClientCAs: pool,
		ClientAuth: tls.VerifyClientCertIfGiven, MinVersion: tls.VersionTLS12}}
	d := mustOpen(t, cfg)
	base := "https://" + d.Addr().String()
	var doMethod func(method string, cert *tls.Certificate, token, path string) int
	do := func(cert *tls.Certificate, token, path string) int {
		t.Helper()
		return doMethod("GET", cert, token, path)
	}
	doMethod = func(method string, cert *tls.Certificate, token, path string) int {
		t.Helper()
		tc := &tls.Config{RootCAs: pool}
		if cert != nil {
			tc.Certificates = []tls.Certificate{*cert}
		}
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tc}, Timeout: 10 * time.Second}
		defer hc.CloseIdleConnections()
		req, _ := http.NewRequestWithContext(context.Background(), method, base+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			if cert == &stranger {
				return -1 // the handshake refused it
			}
			t.Fatalf("%s %s: %v", method, path, err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := do(nil, "", "/healthz"); code != 200 {
		t.Errorf("healthz without credentials: %d", code)
	}
	for _, path := range []string{"/v1/series", "/metrics", "/readyz", "/v1/series/x/view"} {
		if code := do(nil, "", path); code != 401 {
			t.Errorf("%s without credentials: %d, want 401", path, code)
		}
		if code := do(nil, "wrong", path); code != 401 {
			t.Errorf("%s with a wrong token: %d, want 401", path, code)
		}
		if code := do(&stranger, "", path); code != 401 && code != -1 {
			t.Errorf("%s with a stranger's certificate: %d, want 401 or a refused handshake", path, code)
		}
	}
	for _, path := range []string{"/v1/series", "/metrics"} {
		if code := do(nil, "s3cret", path); code != 200 {
			t.Errorf("%s with the token: %d", path, code)
		}
		if code := do(&client, "", path); code != 200 {
			t.Errorf("%s with a client certificate: %d", path, code)
		}
	}
	// The probes and the metrics are read-only: another method is refused.
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		if code := doMethod("POST", nil, "s3cret", path); code != http.StatusMethodNotAllowed {
			t.Errorf("POST %s: %d, want 405", path, code)
		}
	}
	resp, err := http.Get("http://" + d.Addr().String() + "/healthz")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Error("plain HTTP answered 200 on the TLS port")
		}
	}
}

// With http.auth.public_metrics, /metrics (and /healthz) answer without
// credentials and the rest still need them; without a token or client CAs,
// nothing is asked.
func TestAuthenticatePublicMetrics(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) })
	for _, c := range []struct {
		hc   HTTPConfig
		path string
		want int
	}{
		{HTTPConfig{Token: "t", PublicMetrics: true}, "/metrics", 200},
		{HTTPConfig{Token: "t", PublicMetrics: true}, "/healthz", 200},
		{HTTPConfig{Token: "t", PublicMetrics: true}, "/v1/series", 401},
		{HTTPConfig{Token: "t"}, "/metrics", 401},
		{HTTPConfig{}, "/v1/series", 200},
	} {
		rec := httptest.NewRecorder()
		(&Daemon{cfg: Config{HTTP: c.hc}}).authenticate(ok).ServeHTTP(rec, httptest.NewRequest("GET", c.path, nil))
		if rec.Code != c.want {
			t.Errorf("%+v %s: %d, want %d", c.hc, c.path, rec.Code, c.want)
		}
	}
}
