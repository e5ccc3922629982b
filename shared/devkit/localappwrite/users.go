package localappwrite

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"
)

type user struct {
	id, name, email, phone string
	passwordHash           string
	status                 bool
	labels                 []string
	prefs                  map[string]any
	created, updated       time.Time
	passwordUpdate         time.Time
}

// UserSpec describes a user to seed.
type UserSpec struct {
	// ID is the user id.
	ID string `json:"userId"`
	// Email, Phone, Password, Name and Labels are the user's attributes (all optional).
	Email    string   `json:"email"`
	Phone    string   `json:"phone"`
	Password string   `json:"password"`
	Name     string   `json:"name"`
	Labels   []string `json:"labels"`
}

// SeedUser creates a user without generating an event.
func (s *Server) SeedUser(projectID string, spec UserSpec) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	pr := s.projects[projectID]
	if pr == nil {
		return fmt.Errorf("localappwrite: no project %q", projectID)
	}
	if _, err := s.addUserLocked(pr, spec); err != nil {
		return err
	}
	return nil
}

// phoneRe copies Appwrite's Phone validator: "+" and up to 15 digits (E.164).
var phoneRe = regexp.MustCompile(`^\+[1-9]\d{6,14}$`)

func (s *Server) addUserLocked(pr *project, spec UserSpec) (*user, *APIError) {
	if _, dup := pr.users[spec.ID]; dup {
		return nil, newErr(ErrUserAlreadyExists)
	}
	email := strings.ToLower(spec.Email)
	for _, u := range pr.users {
		if email != "" && u.email == email {
			return nil, newErr(ErrUserAlreadyExists)
		}
		if spec.Phone != "" && u.phone == spec.Phone {
			return nil, newErr(ErrUserAlreadyExists)
		}
	}
	now := s.now()
	u := &user{id: spec.ID, name: spec.Name, email: email, phone: spec.Phone, status: true,
		labels: spec.Labels, prefs: map[string]any{}, created: now, updated: now}
	if spec.Password != "" {
		sum := sha256.Sum256([]byte(spec.Password))
		u.passwordHash = hex.EncodeToString(sum[:])
		u.passwordUpdate = now
	}
	pr.users[u.id] = u
	pr.userOrder = append(pr.userOrder, u.id)
	return u, nil
}

// userModel renders Response/Model/User.php (password hash as stored; the stand-in hashes with SHA-256 and
// reports argon2 options like a default Appwrite).
func userModel(u *user) obj {
	var hash, pwUpdate any = "", ""
	var hashOptions any = map[string]any{}
	if u.passwordHash != "" {
		hash = "argon2"
		hashOptions = map[string]any{"type": "argon2", "memoryCost": 2048, "timeCost": 4, "threads": 3}
		pwUpdate = formatTime(u.passwordUpdate)
	}
	prefs := any(u.prefs)
	if len(u.prefs) == 0 {
		prefs = map[string]any{}
	}
	return obj{
		{"$id", u.id}, {"$createdAt", formatTime(u.created)}, {"$updatedAt", formatTime(u.updated)},
		{"name", u.name}, {"password", u.passwordHash}, {"hash", hash}, {"hashOptions", hashOptions},
		{"registration", formatTime(u.created)}, {"status", u.status}, {"labels", nonNil(u.labels)},
		{"passwordUpdate", pwUpdate}, {"email", u.email}, {"phone", u.phone}, {"emailVerification", false},
		{"phoneVerification", false}, {"mfa", false}, {"prefs", prefs}, {"targets", []any{}}, {"accessedAt", ""},
	}
}

func (s *Server) listUsers(c *call) (int, any, *APIError) {
	queries, _, err := c.strArray("queries", false, 100, "Invalid queries")
	if err != nil {
		return 0, nil, err
	}
	search, err := c.str("search", false, "", 256)
	if err != nil {
		return 0, nil, err
	}
	items := make([]obj, 0, len(c.pr.userOrder))
	for _, id := range c.pr.userOrder {
		u := c.pr.users[id]
		if search != "" && !strings.Contains(strings.ToLower(u.id+" "+u.name+" "+u.email+" "+u.phone), strings.ToLower(search)) {
			continue
		}
		items = append(items, userModel(u))
	}
	page, total, err := applyQueries(items, queries)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, obj{{"total", total}, {"users", nonNilObjs(page)}}, nil
}

func (s *Server) getUser(c *call) (int, any, *APIError) {
	u := c.pr.users[c.r.PathValue("userId")]
	if u == nil {
		return 0, nil, newErr(ErrUserNotFound)
	}
	return http.StatusOK, userModel(u), nil
}

// createUser copies POST /v1/users: userId (CustomId), email (Email), phone (Phone), password (at least 8
// chars), name (Text 128); event users.[userId].create.
func (s *Server) createUser(c *call) (int, any, *APIError) {
	id, err := c.customID("userId")
	if err != nil {
		return 0, nil, err
	}
	spec := UserSpec{ID: id}
	if spec.Email, err = c.email("email", false); err != nil {
		return 0, nil, err
	}
	if spec.Phone, err = c.str("phone", false, "", 0); err != nil {
		return 0, nil, err
	}
	if spec.Phone != "" && !phoneRe.MatchString(spec.Phone) {
		return 0, nil, invalidParam("phone", "Phone number must start with a '+' can have a maximum of fifteen digits.")
	}
	if spec.Password, err = c.str("password", false, "", 0); err != nil {
		return 0, nil, err
	}
	if spec.Password != "" {
		if err := checkPasswordLength(spec.Password); err != nil {
			return 0, nil, err
		}
	}
	if spec.Name, err = c.str("name", false, "", 128); err != nil {
		return 0, nil, err
	}
	u, err := s.addUserLocked(c.pr, spec)
	if err != nil {
		return 0, nil, err
	}
	m := userModel(u)
	c.emit("users.[userId].create", m, param{"userId", u.id})
	return http.StatusCreated, m, nil
}

// checkPasswordLength is Appwrite's Password validator and PasswordStrength with the default policy
// (src/Appwrite/Auth/Validator/Password.php, PasswordStrength.php: 8 to 256 bytes; AllOf reports the rule
// that failed, utopia-php/validators src/Validator/AllOf.php): the password param's 400.
func checkPasswordLength(password string) *APIError {
	if len(password) < 8 || len(password) > 256 {
		return invalidParam("password", "Password must be between 8 and 256 characters long.")
	}
	return nil
}

// passwordMatches reports whether password is the user's password (constant-time comparison of the stored
// SHA-256). A user without a password matches nothing.
func (u *user) passwordMatches(password string) bool {
	if u.passwordHash == "" {
		return false
	}
	sum := sha256.Sum256([]byte(password))
	return subtle.ConstantTimeCompare([]byte(hex.EncodeToString(sum[:])), []byte(u.passwordHash)) == 1
}

// userByEmailLocked finds the project's user with this email (stored lower-cased), or nil.
func userByEmailLocked(pr *project, email string) *user {
	email = strings.ToLower(email)
	for _, id := range pr.userOrder {
		if u := pr.users[id]; u != nil && u.email != "" && u.email == email {
			return u
		}
	}
	return nil
}

// passwordUserLocked is Appwrite's email and password check (Account::createEmailPasswordSession): the
// project's user with this email and password, user_invalid_credentials when there is none or the password
// differs, user_blocked for a blocked user.
func passwordUserLocked(pr *project, email, password string) (*user, *APIError) {
	u := userByEmailLocked(pr, email)
	if u == nil || !u.passwordMatches(password) {
		return nil, newErr(ErrUserInvalidCredentials)
	}
	if !u.status {
		return nil, newErr(ErrUserBlocked)
	}
	return u, nil
}
