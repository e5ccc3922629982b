package deploy

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/appwrite/sdk-for-go/models"

	"appwrite-agent/scripts/internal/staging"
)

// functionSpec is one function's settings in the staged appwrite.json (what scripts/stage writes to
// build/appwrite.json): the ids, runtime, scopes, events, timeouts and execute roles deploy gives it.
type functionSpec struct{ staging.AppwriteFunction }

// readSpecs reads the functions of a staged appwrite.json, by id; every one of names must be there.
func readSpecs(raw []byte, names []string) (map[string]functionSpec, error) {
	fns, err := staging.ReadFunctions(raw)
	if err != nil {
		return nil, fmt.Errorf("the staged %w", err)
	}
	out := map[string]functionSpec{}
	for _, f := range fns {
		out[f.ID] = functionSpec{f}
	}
	for _, n := range names {
		if _, ok := out[n]; !ok {
			return nil, fmt.Errorf("the staged appwrite.json has no function %q", n)
		}
	}
	return out, nil
}

// changes names the settings of f that differ from s (roles, events and scopes compared as sets), each as
// "setting: was → now".
func (s functionSpec) changes(f *models.Function) []string {
	var out []string
	str := func(name, was, now string) {
		if was != now {
			out = append(out, fmt.Sprintf("%s: %q → %q", name, was, now))
		}
	}
	set := func(name string, was, now []string) {
		a, b := slices.Clone(was), slices.Clone(now)
		slices.Sort(a)
		slices.Sort(b)
		if !slices.Equal(slices.Compact(a), slices.Compact(b)) {
			out = append(out, fmt.Sprintf("%s: %v → %v", name, was, now))
		}
	}
	str("name", f.Name, s.Name)
	str("runtime", f.Runtime, s.Runtime)
	set("execute", f.Execute, s.Execute)
	set("events", f.Events, s.Events)
	set("scopes", f.Scopes, s.Scopes)
	str("schedule", f.Schedule, s.Schedule)
	str("timeout", strconv.Itoa(f.Timeout), strconv.Itoa(s.Timeout))
	str("enabled", strconv.FormatBool(f.Enabled), strconv.FormatBool(s.Enabled))
	str("logging", strconv.FormatBool(f.Logging), strconv.FormatBool(s.Logging))
	str("entrypoint", f.Entrypoint, s.Entrypoint)
	str("commands", f.Commands, s.Commands)
	if s.Specification != "" {
		str("specification", f.Specification, s.Specification)
	}
	return out
}
