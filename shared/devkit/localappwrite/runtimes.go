package localappwrite

import (
	"net/http"
	"slices"
	"strings"
)

// runtimeInfo is one runtime of the catalog Appwrite's Config::getParam('runtimes') holds: (new
// Runtimes('v5'))->getAll() of appwrite/runtimes (app/config/runtimes.php, 1.9.6), keyed "<key>-<version>".
type runtimeInfo struct {
	key, name, version, base, image string
}

// runtimeCatalog is the part of appwrite/runtimes' catalog (src/Runtimes/Runtimes.php: node 22, go 1.23 to
// 1.26) the stand-in lists. Only go-1.26 is built by the stand-in's builder; a deployment of another runtime
// fails its build.
var runtimeCatalog = []runtimeInfo{
	{"node", "Node.js", "22", "node:22.9.0-alpine3.20", "openruntimes/node:v5-22"},
	{"go", "Go", "1.23", "golang:1.23.1-alpine3.20", "openruntimes/go:v5-1.23"},
	{"go", "Go", "1.24", "golang:1.24.12-alpine3.23", "openruntimes/go:v5-1.24"},
	{"go", "Go", "1.25", "golang:1.25.6-alpine3.23", "openruntimes/go:v5-1.25"},
	{"go", "Go", "1.26", "golang:1.26.0-alpine3.23", "openruntimes/go:v5-1.26"},
}

func (r runtimeInfo) id() string { return r.key + "-" + r.version }

// knownRuntimes are the ids of runtimeCatalog, the WhiteList of the runtime param of functions create and
// update (Functions/Create.php:92, Update.php:77, 1.9.6).
func knownRuntimes() []string {
	out := make([]string, 0, len(runtimeCatalog))
	for _, r := range runtimeCatalog {
		out = append(out, r.id())
	}
	return out
}

// runtimeOffered reports whether id passes _APP_FUNCTIONS_RUNTIMES (Options.FunctionsRuntimes): every
// runtime when the list is empty (Functions/Create.php:209-213, Runtimes/XList.php:57-63, 1.9.6).
func (s *Server) runtimeOffered(id string) bool {
	return len(s.opts.FunctionsRuntimes) == 0 || slices.Contains(s.opts.FunctionsRuntimes, id)
}

// listRuntimes copies GET /v1/functions/runtimes (Modules/Functions/Http/Runtimes/XList.php, 1.9.6): scope
// "public" (which guests have and API keys do not: app/config/roles.php gives ROLE_KEYS only global,
// health.read and graphql besides the key's own scopes), the catalog filtered by _APP_FUNCTIONS_RUNTIMES,
// each entry the Runtime model (Response/Model/Runtime.php: $id, key, name, version, base, image, logo,
// supports).
func (s *Server) listRuntimes(c *call) (int, any, *APIError) {
	out := []obj{}
	for _, r := range runtimeCatalog {
		if !s.runtimeOffered(r.id()) {
			continue
		}
		out = append(out, obj{
			{"$id", r.id()}, {"key", r.key}, {"name", r.name}, {"version", r.version}, {"base", r.base},
			{"image", r.image}, {"logo", r.key + ".png"}, {"supports", []string{"amd64", "arm64"}},
		})
	}
	return http.StatusOK, obj{{"total", len(out)}, {"runtimes", out}}, nil
}

// runtimeDescription is the WhiteList description of the runtime param.
func runtimeDescription() string {
	return "Value must be one of (" + strings.Join(knownRuntimes(), ", ") + ")"
}
