package stats

import "time"

// rateSamples is how many once-a-second samples a rate keeps: ten minutes
// and the one that starts them, Apache's MAX_RECORDS_OF_SAMPLING + 1.
const rateSamples = 601

// sample is a counter's value at one time.
type sample struct {
	at    time.Time
	value int64
}

// rate is one counter sampled once a second (a ring of rateSamples).
//
// Invariant: samples are in time order, oldest first.
type rate struct {
	samples []sample
}

func (r *rate) add(at time.Time, value int64) {
	if len(r.samples) == rateSamples {
		copy(r.samples, r.samples[1:])
		r.samples = r.samples[:rateSamples-1]
	}
	r.samples = append(r.samples, sample{at, value})
}

// perSecond is the counter's growth per second from the sample window ago (or
// the oldest one when the window is older than every sample) to current at
// now; 0 without a sample before now.
func (r *rate) perSecond(window time.Duration, now time.Time, current int64) float64 {
	if len(r.samples) == 0 {
		return 0
	}
	base := r.samples[0]
	for i := len(r.samples) - 1; i >= 0; i-- {
		if !r.samples[i].at.After(now.Add(-window)) {
			base = r.samples[i]
			break
		}
	}
	secs := now.Sub(base.at).Seconds()
	if secs <= 0 {
		return 0
	}
	return float64(current-base.value) / secs
}
