package localappwrite

import (
	"fmt"
	"html"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
)

// DomainPrefix is where the stand-in serves function domains: DomainPrefix + "/{functionId}" plays the part
// of https://<functionId>.<_APP_DOMAIN_FUNCTIONS> (Appwrite routes by host name; a path prefix needs no DNS).
const DomainPrefix = AdminPrefix + "/domains"

// DomainURL is the base URL of a function's local domain.
func (s *Server) DomainURL(functionID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.TrimSuffix(s.endpointLocked(), "/v1") + DomainPrefix + "/" + functionID
}

// maxDomainBody is the router's request cap (Swoole package_max_length, 12 MiB).
const maxDomainBody = 12 << 20

// hopHeaders are not forwarded by the router.
var hopHeaders = []string{"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te", "trailer"}

// serveDomain copies a function-domain request (app/controllers/general.php): the client's method, path, query,
// headers and body go to the function as a synchronous execution (30 s) with x-appwrite-trigger http, an empty
// x-appwrite-user-id and x-appwrite-user-jwt (forced, whatever the client sent), the client's IP, a dynamic
// key with the function's scopes and the execution id; the answer comes back as the function gave it, plus
// x-appwrite-execution-id. A status >= 400 with an empty body is replaced by an HTML error page, as
// Appwrite's router does.
func (s *Server) serveDomain(w http.ResponseWriter, r *http.Request) {
	fid := r.PathValue("functionId")
	s.serveFunction(w, r, "/"+r.PathValue("path"), func() (*project, *function) { return s.functionByIDLocked(fid) })
}

// serveRuleDomain serves a request to a stored rule's domain (the host name names the function, the whole
// path is the function's), as Appwrite's router serves <sub>.<_APP_DOMAIN_FUNCTIONS>.
func (s *Server) serveRuleDomain(w http.ResponseWriter, r *http.Request, rl *rule) {
	s.serveFunction(w, r, r.URL.Path, func() (*project, *function) {
		pr := s.projects[rl.projectID]
		if pr == nil {
			return nil, nil
		}
		return pr, pr.functions[rl.functionID]
	})
}

// serveFunction runs the function lookup names (called with s.mu held) for one domain request with path.
func (s *Server) serveFunction(w http.ResponseWriter, r *http.Request, path string, lookup func() (*project, *function)) {
	if r.URL.RawQuery != "" {
		path += "?" + r.URL.RawQuery
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxDomainBody))
	if err != nil {
		writeDomainError(w, http.StatusRequestEntityTooLarge, "Request body too large")
		return
	}
	h := http.Header{}
	for k, vs := range r.Header {
		lk := strings.ToLower(k)
		if slices.Contains(hopHeaders, lk) || strings.HasPrefix(lk, "x-open-runtimes-") {
			continue
		}
		for _, v := range vs {
			h.Add(k, v)
		}
	}

	s.mu.Lock()
	pr, fn := lookup()
	if fn == nil || !fn.enabled {
		s.mu.Unlock()
		writeDomainError(w, http.StatusNotFound, "Function not found")
		return
	}
	// A domain runs the function only when its execute permissions include "any" or "guests"
	// (app/controllers/general.php:364-370, 1.9.6): else 401 function_execute_permission_missing, rendered as
	// the HTML error view.
	if !slices.Contains(fn.execute, "any") && !slices.Contains(fn.execute, "guests") {
		s.mu.Unlock()
		writeDomainError(w, http.StatusUnauthorized, errorCatalog[ErrFunctionExecutePermissionMissing].message)
		return
	}
	ex := s.newExecutionLocked(fn, "http", r.Method, path, h)
	timeout := min(time.Duration(fn.timeout)*time.Second, s.syncLimitLocked())
	rr, kerr := s.runRequestLocked(pr, fn, ex, timeout, body, h)
	s.mu.Unlock()
	if kerr != nil {
		writeDomainError(w, http.StatusInternalServerError, kerr.Error())
		return
	}
	rr.headers.Set("x-appwrite-trigger", "http")
	rr.headers.Set("x-appwrite-user-id", "")
	rr.headers.Set("x-appwrite-user-jwt", "")
	rr.headers.Del("x-appwrite-event")
	rr.headers.Set("x-appwrite-client-ip", clientIP(r))

	res := s.callRuntime(r.Context(), rr)
	s.finishExecution(pr.id, fn.id, ex.id, res, true, "")
	if res.timedOut {
		writeDomainError(w, http.StatusRequestTimeout, "Synchronous function execution timed out. Use asynchronous execution instead, or ensure the execution duration doesn't exceed 30 seconds.")
		return
	}
	for _, hd := range res.headers {
		if hd.Name == "content-length" {
			continue
		}
		w.Header().Set(hd.Name, hd.Value)
	}
	w.Header().Set("x-appwrite-execution-id", ex.id)
	if res.status >= 400 && res.body == "" {
		writeDomainError(w, res.status, http.StatusText(res.status))
		return
	}
	w.WriteHeader(res.status)
	_, _ = io.WriteString(w, res.body)
}

// functionByIDLocked finds a function by id across projects (a domain names one function).
func (s *Server) functionByIDLocked(id string) (*project, *function) {
	ids := make([]string, 0, len(s.projects))
	for pid := range s.projects {
		ids = append(ids, pid)
	}
	slices.Sort(ids)
	for _, pid := range ids {
		if fn := s.projects[pid].functions[id]; fn != nil {
			return s.projects[pid], fn
		}
	}
	return nil, nil
}

// writeDomainError is the router's branded HTML error page.
func writeDomainError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("content-type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!DOCTYPE html><html><head><title>%d</title></head><body><h1>Error %d</h1><p>%s</p><p>Appwrite</p></body></html>", status, status, html.EscapeString(msg))
}
