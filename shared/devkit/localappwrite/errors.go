package localappwrite

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// Error types the stand-in sends. The strings, HTTP codes and default messages are copied from Appwrite's
// app/config/errors.php (Exception::* constants, 1.9.6 for the webhook, database, table, row-not-found, column and
// general_* entries); the other row_* messages follow their document_* siblings.
const (
	ErrGeneralUnknown             = "general_unknown"
	ErrGeneralServerError         = "general_server_error"
	ErrGeneralAccessForbidden     = "general_access_forbidden"
	ErrGeneralUnauthorizedScope   = "general_unauthorized_scope"
	ErrGeneralArgumentInvalid     = "general_argument_invalid"
	ErrGeneralBadRequest          = "general_bad_request"
	ErrGeneralRouteNotFound       = "general_route_not_found"
	ErrProjectNotFound            = "project_not_found"
	ErrProjectKeyExpired          = "project_key_expired"
	ErrUserUnauthorized           = "user_unauthorized"
	ErrUserJWTInvalid             = "user_jwt_invalid"
	ErrUserNotFound               = "user_not_found"
	ErrUserInvalidCredentials     = "user_invalid_credentials"
	ErrUserBlocked                = "user_blocked"
	ErrUserSessionAlreadyExists   = "user_session_already_exists"
	ErrUserSessionNotFound        = "user_session_not_found"
	ErrUserJWTAndCookieSet        = "user_jwt_and_cookie_set"
	ErrUserAlreadyExists          = "user_already_exists"
	ErrUserEmailAlreadyExists     = "user_email_already_exists"
	ErrUserPhoneAlreadyExists     = "user_phone_already_exists"
	ErrWebhookNotFound            = "webhook_not_found"
	ErrWebhookAlreadyExists       = "webhook_already_exists"
	ErrDatabaseNotFound           = "database_not_found"
	ErrDatabaseAlreadyExists      = "database_already_exists"
	ErrTableNotFound              = "table_not_found"
	ErrTableAlreadyExists         = "table_already_exists"
	ErrRowNotFound                = "row_not_found"
	ErrColumnAlreadyExists        = "column_already_exists"
	ErrColumnDefaultUnsupported   = "column_default_unsupported"
	ErrRowAlreadyExists           = "row_already_exists"
	ErrRowInvalidStructure        = "row_invalid_structure"
	ErrRowMissingPayload          = "row_missing_payload"
	ErrBucketNotFound             = "storage_bucket_not_found"
	ErrBucketAlreadyExists        = "storage_bucket_already_exists"
	ErrFileNotFound               = "storage_file_not_found"
	ErrFileAlreadyExists          = "storage_file_already_exists"
	ErrFileEmpty                  = "storage_file_empty"
	ErrFileTypeUnsupported        = "storage_file_type_unsupported"
	ErrFileInvalidSize            = "storage_invalid_file_size"
	ErrInvalidContentRange        = "storage_invalid_content_range"
	ErrInvalidAppwriteID          = "storage_invalid_appwrite_id"
	ErrFunctionNotFound           = "function_not_found"
	ErrSiteNotFound               = "site_not_found"
	ErrFunctionAlreadyExists      = "function_already_exists"
	ErrExecutionNotFound          = "execution_not_found"
	ErrDeploymentNotFound         = "deployment_not_found"
	ErrFunctionEntrypointMissing  = "function_entrypoint_missing"
	ErrFunctionSyncTimeout        = "function_synchronous_timeout"
	ErrFunctionRuntimeUnsupported = "function_runtime_unsupported"
	ErrBuildNotReady              = "build_not_ready"
	ErrRuleResourceNotFound       = "rule_resource_not_found"
	ErrRuleAlreadyExists          = "rule_already_exists"
	ErrVariableNotFound           = "variable_not_found"
	ErrVariableAlreadyExists      = "variable_already_exists"
	ErrVariableCannotUnsetSecret  = "variable_cannot_unset_secret"
	// ErrAdditionalResourceNotAllowed is APPWRITE CLOUD's plan limit (403): a create beyond what the project's
	// plan allows (Cloud profile only; the open-source server has no plans).
	ErrAdditionalResourceNotAllowed = "additional_resource_not_allowed"
	// ErrFunctionExecutePermissionMissing is a function domain call to a function nobody may execute.
	ErrFunctionExecutePermissionMissing = "function_execute_permission_missing"
)

type errorDef struct {
	code    int
	message string
}

var errorCatalog = map[string]errorDef{
	ErrGeneralUnknown:           {500, "Server Error"},
	ErrGeneralServerError:       {500, "An internal server error occurred."},
	ErrGeneralAccessForbidden:   {401, "Access to this API is forbidden."},
	ErrGeneralUnauthorizedScope: {401, "The current user or API key does not have the required scopes to access the requested resource."},
	ErrGeneralArgumentInvalid:   {400, "The request contains one or more invalid arguments. Please refer to the endpoint documentation."},
	ErrGeneralBadRequest:        {400, "There was an error processing your request. Please check the inputs and try again."},
	ErrGeneralRouteNotFound:     {404, "Route not found. Please ensure the endpoint is configured correctly and that the API route is valid for this SDK version. Refer to the API docs for more details."},
	ErrProjectNotFound:          {404, "Project with the requested ID could not be found. Please check the value of the X-Appwrite-Project header to ensure the correct project ID is being used."},
	ErrProjectKeyExpired:        {401, "The project key has expired. Please generate a new key using the Appwrite console."},
	ErrUserUnauthorized:         {401, "The current user is not authorized to perform the requested action."},
	ErrUserJWTInvalid:           {401, "The JWT token is invalid. Please check the value of the X-Appwrite-JWT header to ensure the correct token is being used."},
	ErrUserNotFound:             {404, "User with the requested ID could not be found."},
	ErrUserInvalidCredentials:   {401, "Invalid credentials. Please check the email and password."},
	ErrUserBlocked:              {403, "The current user has been blocked."},
	ErrUserSessionAlreadyExists: {401, "Creation of a session is prohibited when a session is active."},
	ErrUserSessionNotFound:      {404, "The current user session could not be found."},
	ErrUserJWTAndCookieSet:      {403, "JWT and cookie used in the same request. Use either `setJWT` or `setCookie`. Learn about which authentication method to use in the SSR docs: https://appwrite.io/docs/products/auth/server-side-rendering"},
	ErrUserAlreadyExists:        {409, "A user with the same id, email, or phone already exists in this project."},
	ErrUserEmailAlreadyExists:   {409, "A user with the same email already exists in the current project."},
	ErrUserPhoneAlreadyExists:   {409, "A user with the same phone number already exists in the current project."},
	ErrWebhookNotFound:          {404, "Webhook with the requested ID could not be found."},
	// Cloud's code and type (appwrite/mcp docs/events.md "Failure handling" and "Free plan"; SDK users' code
	// matching error.type, e.g. the bucket and database limits). The open-source source has no such entry;
	// the message follows Cloud's platform-limit wording (appwrite#7488: "The maximum number of platforms
	// allowed for the selected plan has reached. Upgrade to increase the limit.").
	ErrAdditionalResourceNotAllowed:     {403, "The maximum number of webhooks allowed for the selected plan has been reached. Upgrade to increase the limit."},
	ErrWebhookAlreadyExists:             {409, "Webhook with the same ID already exists. Try again with a different ID."},
	ErrDatabaseNotFound:                 {404, "Database with the requested ID '%s' could not be found."},
	ErrDatabaseAlreadyExists:            {409, "Database with the requested ID '%s' already exists. Try again with a different ID or use ID.unique() to generate a unique ID."},
	ErrTableNotFound:                    {404, "Table with the requested ID '%s' could not be found."},
	ErrTableAlreadyExists:               {409, "A table with the requested ID '%s' already exists. Try again with a different ID or use ID.unique() to generate a unique ID."},
	ErrColumnAlreadyExists:              {409, "Column with the requested key '%s' already exists. Column keys must be unique, try again with a different key."},
	ErrColumnDefaultUnsupported:         {400, "Default values cannot be set for array or required columns."},
	ErrRowNotFound:                      {404, "Row with the requested ID '%s' could not be found."},
	ErrRowAlreadyExists:                 {409, "Row with the requested ID already exists. Try again with a different ID or use ID.unique() to generate a unique ID."},
	ErrRowInvalidStructure:              {400, "The row structure is invalid. Please ensure the columns match the table definition."},
	ErrRowMissingPayload:                {400, "The row data and permissions are missing. You must provide either row data or permissions to be updated."},
	ErrBucketNotFound:                   {404, "Storage bucket with the requested ID could not be found."},
	ErrBucketAlreadyExists:              {409, "A storage bucket with the requested ID already exists. Try again with a different ID or use ID.unique() to generate a unique ID."},
	ErrFileNotFound:                     {404, "The requested file could not be found."},
	ErrFileAlreadyExists:                {409, "A storage file with the requested ID already exists."},
	ErrFileEmpty:                        {400, "Empty file passed to the endpoint."},
	ErrFileTypeUnsupported:              {400, "The given file extension is not supported."},
	ErrFileInvalidSize:                  {400, "The file size is either not valid or exceeds the maximum allowed size. Please check the file or the value of the _APP_STORAGE_LIMIT environment variable."},
	ErrInvalidContentRange:              {400, "The content range is invalid. Please check the value of the Content-Range header."},
	ErrInvalidAppwriteID:                {400, "The value for x-appwrite-id header is invalid. Please check the value of the x-appwrite-id header is a valid id and not unique()."},
	ErrFunctionNotFound:                 {404, "Function with the requested ID could not be found."},
	ErrSiteNotFound:                     {404, "Site with the requested ID could not be found."},
	ErrFunctionAlreadyExists:            {409, "Function with the requested ID already exists. Try again with a different ID or use ID.unique() to generate a unique ID."},
	ErrExecutionNotFound:                {404, "Execution with the requested ID could not be found."},
	ErrDeploymentNotFound:               {404, "Deployment with the requested ID could not be found."},
	ErrFunctionEntrypointMissing:        {404, "Entrypoint for your Appwrite Function is missing. Please specify it when making deployment or update the entrypoint under your function's \"Settings\" > \"Configuration\" > \"Entrypoint\"."},
	ErrFunctionExecutePermissionMissing: {401, `To execute function using domain, execute permissions must include "any" or "guests".`},
	ErrFunctionRuntimeUnsupported:       {404, "The requested runtime is either inactive or unsupported. Please check the value of the _APP_FUNCTIONS_RUNTIMES environment variable."},
	ErrBuildNotReady:                    {400, "Build with the requested ID is building and not ready for execution."},
	ErrRuleResourceNotFound:             {404, "Resource could not be found. Please check if the resourceId and resourceType are correct, or if the resource actually exists."},
	ErrRuleAlreadyExists:                {409, "Domain is already used. Please try again with a different domain."},
	ErrVariableNotFound:                 {404, "Variable with the requested ID could not be found."},
	ErrVariableAlreadyExists:            {409, "Variable with the same ID already exists in this project. Try again with a different ID."},
	ErrVariableCannotUnsetSecret:        {400, "Secret variables cannot be marked as non-secret. Please re-create the variable if this is your intention."},
	ErrFunctionSyncTimeout:              {408, "Synchronous function execution timed out. Use asynchronous execution instead, or ensure the execution duration doesn't exceed 30 seconds."},
}

// APIError is an Appwrite error as the API sends it: the body is {"message","code","type","version"}.
type APIError struct {
	// Message is the human-readable message.
	Message string `json:"message"`
	// Code is the HTTP status code.
	Code int `json:"code"`
	// Type is Appwrite's error type, e.g. "webhook_not_found".
	Type string `json:"type"`
	// Version is the Appwrite version the stand-in reports.
	Version string `json:"version"`

	// nullMessage sends "message": null, as Appwrite does for an exception built with a type it has no
	// errors.php entry for (see headersError).
	nullMessage bool
}

func (e *APIError) Error() string { return fmt.Sprintf("%s (%d): %s", e.Type, e.Code, e.Message) }

// withID builds an error whose catalog message takes the resource id (Appwrite's params: [$id], errors.php
// descriptions with '%s', 1.9.6).
func withID(typ, id string) *APIError {
	return newErr(typ, errorCatalog[typ].message, id)
}

// newErr builds an error of the given type with its catalog message, or with msg when msg is not empty.
func newErr(typ string, msg ...any) *APIError {
	def, ok := errorCatalog[typ]
	if !ok {
		def = errorCatalog[ErrGeneralUnknown]
	}
	e := &APIError{Message: def.message, Code: def.code, Type: typ}
	if len(msg) > 0 {
		if f, ok := msg[0].(string); ok {
			e.Message = fmt.Sprintf(f, msg[1:]...)
		}
	}
	return e
}

// invalidParam is Appwrite's message for a param that failed its validator (utopia-php/framework App::validate).
func invalidParam(name, description string) *APIError {
	return newErr(ErrGeneralArgumentInvalid, "Invalid `%s` param: %s", name, description)
}

// missingParam is Appwrite's message for a missing required param.
func missingParam(name string) *APIError {
	return newErr(ErrGeneralArgumentInvalid, "Param \"%s\" is not optional.", name)
}

func (s *Server) writeError(w http.ResponseWriter, e *APIError) {
	e.Version = s.opts.Version
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(e.Code)
	if e.nullMessage {
		_ = json.NewEncoder(w).Encode(map[string]any{"message": nil, "code": e.Code, "type": e.Type, "version": e.Version})
		return
	}
	_ = json.NewEncoder(w).Encode(e)
}
