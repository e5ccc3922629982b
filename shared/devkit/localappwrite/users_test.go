package localappwrite

import (
	"testing"

	"github.com/appwrite/sdk-for-go/users"
)

func TestUsersThroughSDK(t *testing.T) {
	f := newFixture(t, Options{})
	rec := newRecorder(t)
	createHook(t, f, "users", rec.ts.URL, []string{"users.*.create"}, nil)
	us := users.New(f.sdk(f.key))
	u, err := us.Create("alice", us.WithCreateEmail("alice@example.test"), us.WithCreatePassword("password123"), us.WithCreateName("Alice"))
	if err != nil {
		t.Fatal(err)
	}
	if u.Id != "alice" || u.Email != "alice@example.test" || u.Name != "Alice" || !u.Status || u.Hash != "argon2" {
		t.Fatalf("user: %+v", u)
	}
	_, err = us.Create("alice2", us.WithCreateEmail("alice@example.test"))
	wantErr(t, err, 409, ErrUserAlreadyExists)
	_, err = us.Create("bob", us.WithCreateEmail("not-an-email"))
	wantErr(t, err, 400, ErrGeneralArgumentInvalid)
	_, err = us.Create("bob", us.WithCreatePassword("short"))
	wantErr(t, err, 400, ErrGeneralArgumentInvalid)
	if _, err := us.Create("unique()", us.WithCreatePhone("+14155550100")); err != nil {
		t.Fatal(err)
	}
	list, err := us.List()
	if err != nil || list.Total != 2 || len(list.Users) != 2 {
		t.Fatalf("list: %+v %v", list, err)
	}
	list, err = us.List(us.WithListSearch("alice"))
	if err != nil || list.Total != 1 {
		t.Fatalf("search: %+v %v", list, err)
	}
	got, err := us.Get("alice")
	if err != nil || got.Email != "alice@example.test" {
		t.Fatalf("get: %+v %v", got, err)
	}
	_, err = us.Get("nobody")
	wantErr(t, err, 404, ErrUserNotFound)
	f.flush(t)
	if n := len(rec.all()); n != 2 {
		t.Fatalf("want 2 user deliveries, got %d", n)
	}
}
