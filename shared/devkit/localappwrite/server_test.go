package localappwrite

import (
	"slices"
	"testing"
)

// passes is a *testing.M stand-in: it records the profile of each pass and fails the passes listed in fail.
type passes struct {
	current Profile
	ran     []Profile
	fail    map[Profile]int
}

func (p *passes) Run() int {
	p.ran = append(p.ran, p.current)
	return p.fail[p.current]
}

func TestEachProfile(t *testing.T) {
	cases := []struct {
		name, env string
		fail      map[Profile]int
		want      []Profile
		code      int
	}{
		{name: "all by default", want: Profiles},
		{name: "first failure's code", fail: map[Profile]int{ProfileOpenSource: 1}, want: Profiles, code: 1},
		{name: "one named", env: "oss", want: []Profile{ProfileOpenSource}},
		{name: "list named", env: "oss, cloud", want: []Profile{ProfileOpenSource, ProfileCloud}},
		{name: "unknown name", env: "cloud,enterprise", code: 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(EnvProfiles, c.env)
			m := &passes{fail: c.fail}
			code := EachProfile(m, func(p Profile) { m.current = p })
			if code != c.code || !slices.Equal(m.ran, c.want) {
				t.Fatalf("EachProfile with %s=%q: code %d, passes %v; want %d, %v", EnvProfiles, c.env, code, m.ran, c.code, c.want)
			}
		})
	}
}
