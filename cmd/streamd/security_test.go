package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
)

// selfSigned writes a CA-less self-signed certificate for 127.0.0.1 and
// returns the server's TLS config and the PEM file clients trust.
func selfSigned(t *testing.T) (*tls.Config, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kfake"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	kb, _ := x509.MarshalECPrivateKey(key)
	cert, err := tls.X509KeyPair(certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}))
	if err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, ca
}

// `streamd run` authenticates with each SASL mechanism and talks TLS, against
// a broker that requires them: records in, forecasts out.
func TestRunWithSASLAndTLS(t *testing.T) {
	serverTLS, caFile := selfSigned(t)
	for _, tc := range []struct {
		mech, kfakeMech string
		tls             bool
	}{
		{"plain", "PLAIN", false},
		{"scram-sha-256", "SCRAM-SHA-256", false},
		{"scram-sha-512", "SCRAM-SHA-512", true},
	} {
		t.Run(fmt.Sprintf("%s/tls=%v", tc.mech, tc.tls), func(t *testing.T) {
			opts := []kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(1, "in", "out", "dead"),
				kfake.EnableSASL(), kfake.Superuser(tc.kfakeMech, "streamd", "s3cret")}
			tlsYAML := ""
			if tc.tls {
				opts = append(opts, kfake.TLS(serverTLS))
				tlsYAML = fmt.Sprintf(", tls: {enabled: true, ca_file: %q}", caFile)
			}
			c, err := kfake.NewCluster(opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			addrs := c.ListenAddrs()
			cfg := Config{Kafka: KafkaConfig{SASL: SASLConfig{Mechanism: tc.mech, Username: "streamd", Password: "s3cret"},
				TLS: TLSConfig{Enabled: tc.tls, CAFile: caFile}}}
			tlsCfg, mech, err := cfg.Kafka.security()
			if err != nil {
				t.Fatal(err)
			}
			path := writeFile(t, "run.yaml", fmt.Sprintf(`
kafka: {brokers: [%s], group: g, input_topics: [in], forecast_topic: out, dead_letter_topic: dead,
        sasl: {mechanism: %s, username: streamd, password: s3cret}%s}
http: {listen: "127.0.0.1:0"}
model: {lags: 3, working_set: 15, warmup: 60, kernel: {sigma2: 4}, gamma: 100}
forecast: {horizon: 3}
`, addrs[0], tc.mech, tlsYAML))
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			runUntilForecasts(ctx, t, path, addrs, 1, "a", 80, 80-60+1, &kafka.Transport{TLS: tlsCfg, SASL: mech},
				&kafka.Dialer{Timeout: 5 * time.Second, TLS: tlsCfg, SASLMechanism: mech})
		})
	}
}
