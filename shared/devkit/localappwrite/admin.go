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

// adminRoutes registers the admin endpoints (docs/local-appwrite.md). They need no credentials: the stand-in
// is for tests and local development only and must never be exposed.
func (s *Server) adminRoutes(m *http.ServeMux) {
	p := AdminPrefix
	m.HandleFunc("GET "+p, s.adminIndex)
	m.HandleFunc("POST "+p+"/projects", adminJSON(func(spec ProjectSpec) (any, error) {
		if err := s.SeedProject(spec); err != nil {
			return nil, err
		}
		return map[string]any{"projectId": spec.ID}, nil
	}))
	m.HandleFunc("POST "+p+"/projects/{projectId}/keys", func(w http.ResponseWriter, r *http.Request) {
		adminJSON(func(in struct {
			Scopes []string  `json:"scopes"`
			Expire time.Time `json:"expire"`
		}) (any, error) {
			secret, err := s.CreateKeyExpiring(r.PathValue("projectId"), in.Scopes, in.Expire)
			if err != nil {
				return nil, err
			}
			return map[string]any{"secret": secret, "scopes": in.Scopes}, nil
		})(w, r)
	})
	m.HandleFunc("POST "+p+"/projects/{projectId}/members", func(w http.ResponseWriter, r *http.Request) {
		adminJSON(func(in struct {
			UserID string `json:"userId"`
		}) (any, error) {
			return map[string]any{"userId": in.UserID}, s.AddMember(r.PathValue("projectId"), in.UserID)
		})(w, r)
	})
	m.HandleFunc("POST "+p+"/projects/{projectId}/databases", func(w http.ResponseWriter, r *http.Request) {
		adminJSON(func(in DatabaseSpec) (any, error) { return in, s.SeedDatabase(r.PathValue("projectId"), in) })(w, r)
	})
	m.HandleFunc("POST "+p+"/projects/{projectId}/buckets", func(w http.ResponseWriter, r *http.Request) {
		adminJSON(func(in BucketSpec) (any, error) { return in, s.SeedBucket(r.PathValue("projectId"), in) })(w, r)
	})
	m.HandleFunc("POST "+p+"/projects/{projectId}/users", func(w http.ResponseWriter, r *http.Request) {
		adminJSON(func(in UserSpec) (any, error) {
			err := s.SeedUser(r.PathValue("projectId"), in)
			in.Password = ""
			return in, err
		})(w, r)
	})
	m.HandleFunc("POST "+p+"/projects/{projectId}/functions", func(w http.ResponseWriter, r *http.Request) {
		adminJSON(func(in FunctionSpec) (any, error) {
			return map[string]any{"functionId": in.ID}, s.RegisterFunction(r.PathValue("projectId"), in)
		})(w, r)
	})
	m.HandleFunc("PATCH "+p+"/projects/{projectId}/functions/{functionId}", func(w http.ResponseWriter, r *http.Request) {
		adminJSON(func(in struct {
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
		})(w, r)
	})
	m.HandleFunc("POST "+p+"/oauth/token", adminJSON(func(in struct {
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
	}))
	m.HandleFunc("GET "+p+"/deliveries", func(w http.ResponseWriter, r *http.Request) {
		pid, wid := r.URL.Query().Get("projectId"), r.URL.Query().Get("webhookId")
		out := []Delivery{}
		for _, d := range s.Deliveries() {
			if (pid == "" || d.ProjectID == pid) && (wid == "" || d.WebhookID == wid) {
				out = append(out, d)
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"total": len(out), "deliveries": out})
	})
	m.HandleFunc("DELETE "+p+"/deliveries", func(w http.ResponseWriter, _ *http.Request) {
		s.ResetDeliveries()
		w.WriteHeader(http.StatusNoContent)
	})
	m.HandleFunc("POST "+p+"/deliveries/{deliveryId}/retry", func(w http.ResponseWriter, r *http.Request) {
		if err := s.Redeliver(r.PathValue("deliveryId")); err != nil {
			writeJSON(w, http.StatusNotFound, map[string]any{"message": err.Error()})
			return
		}
		writeJSON(w, http.StatusAccepted, map[string]any{"deliveryId": r.PathValue("deliveryId")})
	})
	m.HandleFunc("POST "+p+"/flush", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
		defer cancel()
		if err := s.Flush(ctx); err != nil {
			writeJSON(w, http.StatusGatewayTimeout, map[string]any{"message": err.Error()})
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	m.HandleFunc("POST "+p+"/scheduled/run", func(w http.ResponseWriter, r *http.Request) {
		// Starts every delayed execution now, whatever its scheduledAt (tests and the demo skip the wait).
		writeJSON(w, http.StatusOK, map[string]any{"started": s.RunScheduled(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC))})
	})
	m.HandleFunc("GET "+p+"/jwks", s.serveJWKS)
	m.HandleFunc(DomainPrefix+"/{functionId}/{path...}", s.serveDomain)
}

// adminJSON decodes a JSON body into In, runs f and writes its result (201) or its error (400 {"message"}).
func adminJSON[In any](f func(In) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
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
}

func (s *Server) adminIndex(w http.ResponseWriter, _ *http.Request) {
	p := AdminPrefix
	writeJSON(w, http.StatusOK, map[string]any{
		"endpoint": s.Endpoint(),
		"issuer":   s.Issuer(),
		"routes": []string{
			"POST " + p + "/projects", "POST " + p + "/projects/{projectId}/keys",
			"POST " + p + "/projects/{projectId}/members", "POST " + p + "/projects/{projectId}/databases",
			"POST " + p + "/projects/{projectId}/buckets", "POST " + p + "/projects/{projectId}/users",
			"POST " + p + "/projects/{projectId}/functions", "PATCH " + p + "/projects/{projectId}/functions/{functionId}",
			"POST " + p + "/oauth/token", "GET " + p + "/deliveries", "DELETE " + p + "/deliveries",
			"POST " + p + "/deliveries/{deliveryId}/retry", "POST " + p + "/flush", "POST " + p + "/scheduled/run", "GET " + p + "/jwks", DomainPrefix + "/{functionId}/{path...}",
		},
	})
}

func (s *Server) serveJWKS(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, s.JWKS())
}
