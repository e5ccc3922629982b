package platform_test

import (
	"testing"

	"appwrite-agent/shared/platform"
)

// TestFromEnvTrimsOneWay: every variable loses its surrounding white space, the endpoint its trailing slashes
// too; unset variables stay empty and the build id is then "dev".
func TestFromEnvTrimsOneWay(t *testing.T) {
	env := map[string]string{
		platform.EnvEndpoint:   " https://cloud.appwrite.io/v1// \n",
		platform.EnvProjectID:  "\tproj1 ",
		platform.EnvFunctionID: " turn",
		platform.EnvDeployment: "dep1 ",
	}
	got := platform.FromEnv(func(k string) string { return env[k] })
	want := platform.Env{Endpoint: "https://cloud.appwrite.io/v1", ProjectID: "proj1", FunctionID: "turn", Deployment: "dep1"}
	if got != want {
		t.Fatalf("FromEnv = %+v, want %+v", got, want)
	}
	if got.BuildID() != "dep1" {
		t.Fatalf("BuildID = %q, want dep1", got.BuildID())
	}
	empty := platform.FromEnv(func(string) string { return "" })
	if empty != (platform.Env{}) || empty.BuildID() != platform.DevBuildID {
		t.Fatalf("unset: %+v, build id %q", empty, empty.BuildID())
	}
	if blank := platform.FromEnv(func(string) string { return "  " }); blank.BuildID() != platform.DevBuildID {
		t.Fatalf("blank deployment: build id %q, want %q", blank.BuildID(), platform.DevBuildID)
	}
}
