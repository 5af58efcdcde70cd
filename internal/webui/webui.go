// Package webui holds the daemon's web view: static pages and scripts,
// embedded in the binary so that the view works offline. The pages draw what
// the daemon's read-only endpoints send (internal/daemon: GET
// /v1/series/{id}/view and the event streams under /v1/events/); the charts
// are SVG drawn by static/svgplot.js, with no third-party code.
package webui

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var static embed.FS

// Handler serves the view's files: / is the series overview, /series.html?id=ID
// a series' page. The daemon mounts it under /ui/.
func Handler() http.Handler {
	sub, err := fs.Sub(static, "static")
	if err != nil { // the embedded tree is fixed at build time
		panic(err)
	}
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		h := w.Header()
		// Everything the pages load comes from this server: a script or
		// style from anywhere else (or inline) is refused.
		h.Set("Content-Security-Policy", "default-src 'self'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		// Embedded files have no modification time to revalidate against;
		// they are small, and change with the binary.
		h.Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, req)
	})
}
