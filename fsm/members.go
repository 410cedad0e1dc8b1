package fsm

import (
	"cmp"
	"slices"
)

// CmdMemberUpsert records what one member of the group says about itself
// (code 26, the next free number after TransactionOps).
const CmdMemberUpsert CommandType = 26

// maxMemberField bounds each string of a MemberInfo: a raft id, a host:port
// and a group name are short; a longer one is a corrupt or hostile command.
const maxMemberField = 255

// MemberInfo is one member's self-description, replicated so that every node
// knows it: the address clients (and followers relaying writes) reach it at,
// and the dLegerGroup it was configured with.
//
// A node proposes its own MemberInfo when it becomes leader and the replicated
// one differs, so followers learn the leader's client address by its raft id
// without a dLegerPeerClientAddrs key (Apache's configs have none). Members
// that never led have no entry, which is enough: writes are only ever relayed
// to the leader. Entries are never removed by the FSM (a removed member's
// entry is harmless: it can no longer lead).
type MemberInfo struct {
	ID         string `json:"id"`         // raft server id, dLegerSelfId
	ClientAddr string `json:"clientAddr"` // host:port, brokerIP1:listenPort
	Group      string `json:"group"`      // dLegerGroup
}

// MemberUpsert replaces the MemberInfo of Member.ID.
type MemberUpsert struct{ Member MemberInfo }

func (MemberUpsert) commandType() CommandType { return CmdMemberUpsert }

// decodeMemberUpsert reads the JSON payload (appendJSON's form, as for topics:
// rare, readable, and open to new fields).
func decodeMemberUpsert(p []byte) (*MemberUpsert, error) {
	const t = CmdMemberUpsert
	var c MemberUpsert
	if err := decodeJSON(t, p, &c.Member); err != nil {
		return nil, err
	}
	m := c.Member
	switch {
	case m.ID == "" || m.ClientAddr == "":
		return nil, badf(t, "member id %q, client address %q: both are required", m.ID, m.ClientAddr)
	case len(m.ID) > maxMemberField || len(m.ClientAddr) > maxMemberField || len(m.Group) > maxMemberField:
		return nil, badf(t, "field over %d bytes", maxMemberField)
	}
	return &c, nil
}

// Member returns the replicated MemberInfo of a raft id.
func (m *Metadata) Member(id string) (MemberInfo, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	info, ok := m.members[id]
	return info, ok
}

// Members returns every replicated MemberInfo sorted by id.
func (m *Metadata) Members() []MemberInfo {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return sortedMembers(m.members)
}

// upsertMember applies a MemberUpsert. It does not move DataVersion: members
// are not part of the topic routes the nameserver refreshes on it.
func (m *Metadata) upsertMember(info MemberInfo) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.members[info.ID] = info
}

func sortedMembers(ms map[string]MemberInfo) []MemberInfo {
	out := make([]MemberInfo, 0, len(ms))
	for _, info := range ms {
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b MemberInfo) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// membersImage is the members part of the metadata image: nil (absent) while
// no member ever announced itself, so images of older nodes and of groups
// that never elected since the upgrade keep their bytes.
func membersImage(ms map[string]MemberInfo) []MemberInfo {
	if len(ms) == 0 {
		return nil
	}
	return sortedMembers(ms)
}
