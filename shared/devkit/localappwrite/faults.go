package localappwrite

import "net/http"

// Injected faults (stand-in only): a test makes chosen API requests fail, to prove that a client which stops
// halfway says what it did and finishes on a second run.

// fault answers the next times API requests with method and path as a server error.
type fault struct {
	method, path string
	times        int
}

// FailRequests makes the next times API requests whose method and URL path are method and path (e.g.
// "POST", "/v1/functions/chat/deployments") fail before anything is done, answered 500 general_server_error
// "An internal server error occurred." as Appwrite answers an unexpected exception
// (app/controllers/general.php error handler, errors.php GENERAL_SERVER_ERROR). Stand-in only.
func (s *Server) FailRequests(method, path string, times int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &fault{method: method, path: path, times: times})
}

// takeFaultLocked returns the injected error for r, counting it, or nil. s.mu must be held.
func (s *Server) takeFaultLocked(r *http.Request) *APIError {
	for i, f := range s.faults {
		if f.method == r.Method && f.path == r.URL.Path {
			f.times--
			if f.times <= 0 {
				s.faults = append(s.faults[:i], s.faults[i+1:]...)
			}
			return newErr(ErrGeneralServerError)
		}
	}
	return nil
}
