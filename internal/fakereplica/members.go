package fakereplica

import (
	"context"

	"github.com/rocketraft/rocketraft/fsm"
)

// Member returns what AnnounceMember or SetMember stored for id.
func (f *Replica) Member(id string) (fsm.MemberInfo, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	info, ok := f.members[id]
	return info, ok
}

// AnnounceMember stores info when this fake leads, as the FSM applies a
// MemberUpsert, and counts the call (Announcements).
func (f *Replica) AnnounceMember(_ context.Context, info fsm.MemberInfo) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.leading(); err != nil {
		return err
	}
	f.setMemberLocked(info)
	f.announcements++
	return nil
}

// SetMember installs info as if another member's announcement had been
// replicated to this fake.
func (f *Replica) SetMember(info fsm.MemberInfo) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setMemberLocked(info)
}

// Announcements counts AnnounceMember calls that succeeded.
func (f *Replica) Announcements() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.announcements
}

func (f *Replica) setMemberLocked(info fsm.MemberInfo) {
	if f.members == nil {
		f.members = map[string]fsm.MemberInfo{}
	}
	f.members[info.ID] = info
}
