package localappwrite

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"
)

// AdminPrefix is the path prefix of the stand-in's own endpoints; no Appwrite route uses it.
const AdminPrefix = "/_local"

// The admin endpoints (docs/local-appwrite.md), in the route table. They need no credentials: the stand-in
// is for tests and local development only and must never be exposed.

func (s *Server) adminSeedProject(w http.ResponseWriter, r *http.Request) {
	adminJSON(w, r, func(spec ProjectSpec) (any, error) {
		if err := s.SeedProject(spec); err != nil {
			return nil, err
		}
		return map[string]any{"projectId": spec.ID}, nil
	})
}

func (s *Server) adminCreateKey(w http.ResponseWriter, r *http.Request) {
	adminJSON(w, r, func(in struct {
		Scopes []string  `json:"scopes"`
		Expire time.Time `json:"expire"`
	}) (any, error) {
		secret, err := s.CreateKeyExpiring(r.PathValue("projectId"), in.Scopes, in.Expire)
		if err != nil {
			return nil, err
		}
		return map[string]any{"secret": secret, "scopes": in.Scopes}, nil
	})
}

func (s *Server) adminAddMember(w http.ResponseWriter, r *http.Request) {
	adminJSON(w, r, func(in struct {
		UserID string `json:"userId"`
	}) (any, error) {
		return map[string]any{"userId": in.UserID}, s.AddMember(r.PathValue("projectId"), in.UserID)
	})
}

func (s *Server) adminSeedDatabase(w http.ResponseWriter, r *http.Request) {
	adminJSON(w, r, func(in DatabaseSpec) (any, error) { return in, s.SeedDatabase(r.PathValue("projectId"), in) })
}

func (s *Server) adminSeedBucket(w http.ResponseWriter, r *http.Request) {
	adminJSON(w, r, func(in BucketSpec) (any, error) { return in, s.SeedBucket(r.PathValue("projectId"), in) })
}

func (s *Server) adminSeedUser(w http.ResponseWriter, r *http.Request) {
	adminJSON(w, r, func(in UserSpec) (any, error) {
		err := s.SeedUser(r.PathValue("projectId"), in)
		in.Password = ""
		return in, err
	})
}

func (s *Server) adminRegisterFunction(w http.ResponseWriter, r *http.Request) {
	adminJSON(w, r, func(in FunctionSpec) (any, error) {
		return map[string]any{"functionId": in.ID}, s.RegisterFunction(r.PathValue("projectId"), in)
	})
}

func (s *Server) adminPatchFunction(w http.ResponseWriter, r *http.Request) {
	adminJSON(w, r, func(in struct {
		URL  *string `json:"url"`
		Fail *bool   `json:"fail"`
	}) (any, error) {
		pid, fid := r.PathValue("projectId"), r.PathValue("functionId")
		if in.URL != nil {
			if err := s.SetFunctionURL(pid, fid, *in.URL); err != nil {
				return nil, err
			}
		}
		if in.Fail != nil {
			if err := s.SetFunctionFailing(pid, fid, *in.Fail); err != nil {
				return nil, err
			}
		}
		return map[string]any{"functionId": fid}, nil
	})
}

func (s *Server) adminMintToken(w http.ResponseWriter, r *http.Request) {
	adminJSON(w, r, func(in struct {
		Sub        string   `json:"sub"`
		Aud        string   `json:"aud"`
		Scopes     []string `json:"scopes"`
		TTLSeconds int      `json:"ttlSeconds"`
	}) (any, error) {
		ttl := time.Duration(in.TTLSeconds) * time.Second
		if ttl <= 0 {
			ttl = time.Hour
		}
		tok, err := s.MintToken(in.Sub, in.Aud, in.Scopes, ttl)
		if err != nil {
			return nil, err
		}
		return map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": int(ttl.Seconds()),
			"scope": strings.Join(in.Scopes, " ")}, nil
	})
}

func (s *Server) adminDeliveries(w http.ResponseWriter, r *http.Request) {
	pid, wid := r.URL.Query().Get("projectId"), r.URL.Query().Get("webhookId")
	out := []Delivery{}
	for _, d := range s.Deliveries() {
		if (pid == "" || d.ProjectID == pid) && (wid == "" || d.WebhookID == wid) {
			out = append(out, d)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"total": len(out), "deliveries": out})
}

func (s *Server) adminResetDeliveries(w http.ResponseWriter, _ *http.Request) {
	s.ResetDeliveries()
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) adminRedeliver(w http.ResponseWriter, r *http.Request) {
	if err := s.Redeliver(r.PathValue("deliveryId")); err != nil {
		writeJSON(w, http.StatusNotFound, map[string]any{"message": err.Error()})
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"deliveryId": r.PathValue("deliveryId")})
}

func (s *Server) adminFlush(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	if err := s.Flush(ctx); err != nil {
		writeJSON(w, http.StatusGatewayTimeout, map[string]any{"message": err.Error()})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// adminRunScheduled starts every delayed execution now, whatever its scheduledAt (tests and the demo skip the
// wait).
func (s *Server) adminRunScheduled(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"started": s.RunScheduled(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC))})
}

// adminJSON decodes r's JSON body into In, runs f and writes its result (201) or its error (400 {"message"}).
func adminJSON[In any](w http.ResponseWriter, r *http.Request, f func(In) (any, error)) {
	var in In
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err == nil && len(strings.TrimSpace(string(body))) > 0 {
		err = json.Unmarshal(body, &in)
	}
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"message": "invalid JSON body: " + err.Error()})
		return
	}
	out, err := f(in)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"message": err.Error()})
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

// adminIndex is GET /_local: the endpoint, the issuer and the admin routes of the route table.
func (s *Server) adminIndex(w http.ResponseWriter, _ *http.Request) {
	var routes []string
	for _, rt := range routeTable() {
		if _, path, _ := strings.Cut(rt.pattern, " "); strings.HasPrefix(path, AdminPrefix+"/") || strings.HasPrefix(rt.pattern, AdminPrefix+"/") {
			routes = append(routes, rt.pattern)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"endpoint": s.Endpoint(), "issuer": s.Issuer(), "routes": routes})
}

func (s *Server) serveJWKS(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, s.JWKS())
}
