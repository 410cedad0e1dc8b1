package console

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// dist is the front-end's build output, committed (docs/console-api.md §
// Basics): index.html plus its assets. The UI's build replaces the directory.
//
//go:embed dist
var dist embed.FS

// assets serves dist: a file at its path, anything else index.html, so the
// front-end's own routes survive a reload.
func assets() http.Handler {
	root, err := fs.Sub(dist, "dist")
	if err != nil {
		panic("console: embedded dist directory missing: " + err.Error()) // a build without go:embed's files
	}
	files := http.FileServerFS(root)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			writeJSON(w, http.StatusMethodNotAllowed, errorDoc{Code: codeMethodNotAllowed, Error: r.Method + " " + r.URL.Path + ": the page is read-only"})
			return
		}
		// The page may load nothing from another host (no CDN, no web fonts);
		// the browser enforces it. Inline styles stay allowed for chart libraries.
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'")
		name := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
		if name != "" {
			if st, err := fs.Stat(root, name); err == nil && !st.IsDir() {
				files.ServeHTTP(w, r)
				return
			}
		}
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeFileFS(w, r, root, "index.html")
	})
}
