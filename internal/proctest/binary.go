package proctest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// EnvBinary names a prebuilt rocketraft binary to test instead of building one
// (the make targets set it to the binary `make build` produced).
const EnvBinary = "ROCKETRAFT_BIN"

// Binary returns the rocketraft binary a suite runs: the absolute path of
// $ROCKETRAFT_BIN when it is set, otherwise cmd/rocketraft of the module rooted
// at repoRoot, built into dir.
func Binary(repoRoot, dir string) (string, error) {
	if prebuilt := os.Getenv(EnvBinary); prebuilt != "" {
		return filepath.Abs(prebuilt)
	}
	return BuildBinary(repoRoot, dir)
}

// BuildBinary compiles cmd/rocketraft of the module rooted at repoRoot into
// dir/rocketraft and returns that path; a failed build's error carries go
// build's output.
func BuildBinary(repoRoot, dir string) (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("go tool not in PATH: %w", err)
	}
	out := filepath.Join(dir, "rocketraft")
	cmd := exec.Command(goTool, "build", "-o", out, "./cmd/rocketraft")
	cmd.Dir = repoRoot
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/rocketraft: %w\n%s", err, buf.String())
	}
	return out, nil
}
