package sandbox

import (
	_ "embed"
	"net/http"
)

// OpenAPI is the OpenAPI 3.1 description of the API, written from the reference.
//
//go:embed openapi.yaml
var OpenAPI []byte

func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/yaml; charset=utf-8")
	w.Write(OpenAPI)
}
