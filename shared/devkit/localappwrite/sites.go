package localappwrite

import (
	"fmt"
	"net/http"
	"time"
)

// Sites, as far as the events of their deployments need them: a seeded site, GET /v1/sites/{siteId}
// (Modules/Sites/Http/Sites/Get.php, scope sites.read, 404 site_not_found), and SiteDeploymentDone, which
// plays the end of a site's build. Sites are not built or served by the stand-in.

// site is a project's site.
type site struct {
	id, name         string
	created, updated time.Time
	deploymentID     string
	deployments      int
}

// SiteSpec seeds a site.
type SiteSpec struct {
	ID, Name string
}

// SeedSite creates (or renames) a site of projectID.
func (s *Server) SeedSite(projectID string, spec SiteSpec) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	pr, err := s.seedProjectLocked(projectID, "site", spec.ID)
	if err != nil {
		return err
	}
	now := s.now()
	st := pr.sites[spec.ID]
	if st == nil {
		st = &site{id: spec.ID, created: now}
		pr.sites[spec.ID] = st
	}
	st.name, st.updated = spec.Name, now
	return nil
}

// siteModel renders the part of Response/Model/Site.php a client reads to know the site exists.
func siteModel(st *site) obj {
	return obj{
		{"$id", st.id}, {"$createdAt", formatTime(st.created)}, {"$updatedAt", formatTime(st.updated)},
		{"name", st.name}, {"enabled", true}, {"live", st.deploymentID != ""}, {"logging", true},
		{"framework", "other"}, {"deploymentId", st.deploymentID},
	}
}

func (s *Server) getSite(c *call) (int, any, *APIError) {
	st := c.pr.sites[c.r.PathValue("siteId")]
	if st == nil {
		return 0, nil, newErr(ErrSiteNotFound)
	}
	return http.StatusOK, siteModel(st), nil
}

// SiteDeploymentDone plays the end of a build of a new deployment of site: the deployment reaches status
// (ready or failed) and Appwrite fires sites.[siteId].deployments.[deploymentId].update with the Deployment
// model (resourceType "sites"), as its builds worker fans out a deployment's status changes to webhooks
// (Modules/Functions/Workers/Jobs.php dispatchUpdate, HEAD 0cefd06: "Notify project webhooks ... of a
// deployment update, mirroring the executor Builds worker's fan-out"). It returns the deployment id.
func (s *Server) SiteDeploymentDone(projectID, siteID, status string) (string, error) {
	s.mu.Lock()
	pr := s.projects[projectID]
	if pr == nil || pr.sites[siteID] == nil {
		s.mu.Unlock()
		return "", fmt.Errorf("localappwrite: no site %q in project %q", siteID, projectID)
	}
	st := pr.sites[siteID]
	st.deployments++
	now := s.now()
	dep := &deployment{id: fmt.Sprintf("%s-dep-%d", siteID, st.deployments), functionID: siteID, typ: "manual",
		status: status, created: now, updated: now, received: map[int]bool{}}
	if status == "ready" {
		st.deploymentID = dep.id
	}
	m := deploymentModel(dep)
	for i := range m {
		if m[i].k == "resourceType" {
			m[i].v = "sites"
		}
	}
	s.mu.Unlock()
	s.dispatch(pendingEvent{project: projectID, pattern: "sites.[siteId].deployments.[deploymentId].update", payload: m,
		params: []param{{"siteId", siteID}, {"deploymentId", dep.id}}})
	return dep.id, nil
}
