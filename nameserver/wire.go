package nameserver

import (
	"fmt"
	"strconv"
	"time"
)

// Header (extFields) keys, as RocketMQ's RegisterBrokerRequestHeader and friends
// spell them. Every value on the wire is a string.
const (
	extBrokerName         = "brokerName"
	extBrokerAddr         = "brokerAddr"
	extClusterName        = "clusterName"
	extHAServerAddr       = "haServerAddr"
	extMasterAddr         = "masterAddr"
	extBrokerID           = "brokerId"
	extHeartbeatTimeout   = "heartbeatTimeoutMillis"
	extEnableActingMaster = "enableActingMaster"
	extCompressed         = "compressed"
	extBodyCRC32          = "bodyCrc32"
	extZoneName           = "__ZONE_NAME"
	extTopic              = "topic"
	// extFenced marks a REGISTER_BROKER refusal caused by fencing, so a rocketraft
	// broker can tell it from other failures without parsing the remark. Java
	// brokers ignore unknown ext keys.
	extFenced = "fenced"
)

// extReader pulls typed values out of extFields and keeps the first problem, so a
// processor checks one error after reading every field.
type extReader struct {
	ext map[string]string
	err error
}

func (r *extReader) fail(key, val, why string) {
	if r.err == nil {
		r.err = fmt.Errorf("ext %s=%q: %s: %w", key, val, why, ErrInvalidRequest)
	}
}

func (r *extReader) required(key string) string {
	v, ok := r.ext[key]
	if !ok || v == "" {
		r.fail(key, v, "required")
	}
	return v
}

func (r *extReader) optional(key string) string { return r.ext[key] }

// int64 parses key; a missing or empty optional key yields def.
func (r *extReader) int64(key string, required bool, def int64) int64 {
	v, ok := r.ext[key]
	if !ok || v == "" {
		if required {
			r.fail(key, v, "required")
		}
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		r.fail(key, v, "not a decimal integer")
		return def
	}
	return n
}

func (r *extReader) bool(key string) bool {
	switch v := r.ext[key]; v {
	case "", "false":
		return false
	case "true":
		return true
	default:
		r.fail(key, v, `want "true" or "false"`)
		return false
	}
}

// encodeRegister builds the REGISTER_BROKER ext fields and body for req, the way a
// RocketMQ 5.x broker does (uncompressed, CRC checked).
func encodeRegister(req RegisterRequest) (map[string]string, []byte, error) {
	body, err := encodeRegisterBody(req.Topics, req.DataVersion)
	if err != nil {
		return nil, nil, err
	}
	ext := map[string]string{
		extBrokerName:         req.BrokerName,
		extBrokerAddr:         req.BrokerAddr,
		extClusterName:        req.ClusterName,
		extHAServerAddr:       req.HAServerAddr,
		extBrokerID:           strconv.FormatInt(int64(req.BrokerID), 10),
		extEnableActingMaster: strconv.FormatBool(req.EnableActingMaster),
		extCompressed:         "false",
		extBodyCRC32:          strconv.FormatInt(int64(BodyCRC32(body)), 10),
	}
	if req.HeartbeatTimeout > 0 {
		ext[extHeartbeatTimeout] = strconv.FormatInt(req.HeartbeatTimeout.Milliseconds(), 10)
	}
	if req.ZoneName != "" {
		ext[extZoneName] = req.ZoneName
	}
	return ext, body, nil
}

// decodeRegister parses a REGISTER_BROKER request. A CRC mismatch is ErrCRCMismatch;
// every other problem is ErrInvalidRequest. ConnID is left for the caller.
func decodeRegister(ext map[string]string, body []byte) (RegisterRequest, error) {
	r := extReader{ext: ext}
	req := RegisterRequest{
		BrokerName:         r.required(extBrokerName),
		BrokerAddr:         r.required(extBrokerAddr),
		ClusterName:        r.required(extClusterName),
		HAServerAddr:       r.optional(extHAServerAddr),
		BrokerID:           BrokerID(r.int64(extBrokerID, true, 0)),
		HeartbeatTimeout:   time.Duration(r.int64(extHeartbeatTimeout, false, 0)) * time.Millisecond,
		EnableActingMaster: r.bool(extEnableActingMaster),
		ZoneName:           r.optional(extZoneName),
	}
	compressed := r.bool(extCompressed)
	crc := r.int64(extBodyCRC32, false, 0)
	if r.err != nil {
		return RegisterRequest{}, fmt.Errorf("register broker=%q: %w", req.BrokerName, r.err)
	}
	if req.HeartbeatTimeout < 0 {
		return RegisterRequest{}, fmt.Errorf("register broker=%s heartbeatTimeoutMillis=%d: negative: %w",
			req.BrokerName, req.HeartbeatTimeout.Milliseconds(), ErrInvalidRequest)
	}
	if compressed {
		// Java's compressed form is a custom deflate layout that only
		// compressedRegister=true brokers use; rocketraft brokers never do.
		return RegisterRequest{}, fmt.Errorf("register broker=%s: compressed body not supported: %w",
			req.BrokerName, ErrInvalidRequest)
	}
	if crc != 0 {
		if got := int64(BodyCRC32(body)); got != crc {
			return RegisterRequest{}, fmt.Errorf("register broker=%s bodyCrc32=%d computed=%d: %w",
				req.BrokerName, crc, got, ErrCRCMismatch)
		}
	}
	topics, dv, err := decodeRegisterBody(body)
	if err != nil {
		return RegisterRequest{}, fmt.Errorf("register broker=%s: %w", req.BrokerName, err)
	}
	req.Topics, req.DataVersion = topics, dv
	return req, nil
}

func encodeUnregister(req UnregisterRequest) map[string]string {
	return map[string]string{
		extBrokerName:  req.BrokerName,
		extBrokerAddr:  req.BrokerAddr,
		extClusterName: req.ClusterName,
		extBrokerID:    strconv.FormatInt(int64(req.BrokerID), 10),
	}
}

func decodeUnregister(ext map[string]string) (UnregisterRequest, error) {
	r := extReader{ext: ext}
	req := UnregisterRequest{
		BrokerName:  r.required(extBrokerName),
		BrokerAddr:  r.required(extBrokerAddr),
		ClusterName: r.optional(extClusterName),
		BrokerID:    BrokerID(r.int64(extBrokerID, true, 0)),
	}
	if r.err != nil {
		return UnregisterRequest{}, fmt.Errorf("unregister broker=%q: %w", req.BrokerName, r.err)
	}
	return req, nil
}
