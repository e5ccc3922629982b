// Package platform reads the variables the Appwrite Functions runtime sets for every function: where the
// project's API is, which project, function and deployment this is (docs/deploy.md). It is their one reader:
// each function's config.go calls FromEnv once per process, with the process environment's getter, and passes
// the Env down.
package platform

import "strings"

// The variables Appwrite sets in every function's environment (and scripts/dev and the stand-in's runtime
// in theirs).
const (
	// EnvEndpoint is the project's API endpoint as the function reaches it, ending in /v1.
	EnvEndpoint = "APPWRITE_FUNCTION_API_ENDPOINT"
	// EnvProjectID is the project the function belongs to.
	EnvProjectID = "APPWRITE_FUNCTION_PROJECT_ID"
	// EnvFunctionID is the function's id.
	EnvFunctionID = "APPWRITE_FUNCTION_ID"
	// EnvDeployment is the id of the deployment that runs.
	EnvDeployment = "APPWRITE_FUNCTION_DEPLOYMENT"
)

// DevBuildID is the build id of a process that no deployment runs (tests, a local run without the variable).
const DevBuildID = "dev"

// Env is what the platform says about the running function. Each field is its variable without surrounding
// white space; a variable that is unset (outside Appwrite) leaves its field empty.
type Env struct {
	// Endpoint is EnvEndpoint without trailing slashes, such as https://fra.cloud.appwrite.io/v1.
	Endpoint string
	// ProjectID is EnvProjectID.
	ProjectID string
	// FunctionID is EnvFunctionID.
	FunctionID string
	// Deployment is EnvDeployment.
	Deployment string
}

// FromEnv reads the platform's variables through getenv (the process environment's getter in a
// function's config.go, a map in tests).
func FromEnv(getenv func(string) string) Env {
	return Env{
		Endpoint:   strings.TrimRight(strings.TrimSpace(getenv(EnvEndpoint)), "/"),
		ProjectID:  strings.TrimSpace(getenv(EnvProjectID)),
		FunctionID: strings.TrimSpace(getenv(EnvFunctionID)),
		Deployment: strings.TrimSpace(getenv(EnvDeployment)),
	}
}

// BuildID is what /health and the fault reports name the running code by: the deployment id, or DevBuildID
// when no deployment runs.
func (e Env) BuildID() string {
	if e.Deployment == "" {
		return DevBuildID
	}
	return e.Deployment
}
