package chaos

import "errors"

// ErrMountNotPermitted is returned by MountTmpfs when this process may not mount
// (no CAP_SYS_ADMIN, or not Linux): scenarios needing a small file system skip.
var ErrMountNotPermitted = errors.New("mounting a file system is not permitted here")
