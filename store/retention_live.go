package store

import (
	"fmt"
	"slices"
	"time"
)

// SetRetention changes the retention settings of an open store (fileReservedTime,
// deleteWhen, diskMaxUsedSpaceRatio changed live): the next CleanExpired uses them.
// CleanExpired reads them under mu, so a run in progress finishes with the old ones.
// Bad values are refused with the rule they break and change nothing.
func (s *Store) SetRetention(reserved time.Duration, deleteWhenHours []int, diskMaxUsedRatio float64) error {
	switch {
	case reserved <= 0:
		return fmt.Errorf("store: retention FileReservedTime=%s, want > 0", reserved)
	case len(deleteWhenHours) == 0 || slices.ContainsFunc(deleteWhenHours, func(h int) bool { return h < 0 || h > 23 }):
		return fmt.Errorf("store: retention DeleteWhenHours=%v, want one or more hours 0-23", deleteWhenHours)
	case diskMaxUsedRatio <= 0 || diskMaxUsedRatio > 1:
		return fmt.Errorf("store: retention DiskMaxUsedSpaceRatio=%g, want (0,1]", diskMaxUsedRatio)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.FileReservedTime = reserved
	s.cfg.DeleteWhenHours = slices.Clone(deleteWhenHours)
	s.cfg.DiskMaxUsedSpaceRatio = diskMaxUsedRatio
	return nil
}
