package stats

import (
	"fmt"
	"strconv"
	"sync"
	"time"
)

// Windows of the "t10 t60 t600" rates (putTps, getTransferredTps, ...).
var rateWindows = [...]time.Duration{10 * time.Second, time.Minute, 10 * time.Minute}

// itemKey names one item.
type itemKey struct{ name, key string }

// Stats is one node's traffic counters.
type Stats struct {
	cluster string
	boot    time.Time

	mu sync.Mutex
	// Totals since boot. putMsgs counts stored messages, putFailed send
	// requests answered with a failure; getFound and getMiss count pulls
	// answered with and without messages, transferred the messages they carried.
	putMsgs, putBytes, putFailed   int64
	getFound, getMiss, transferred int64
	putRate, foundRate, missRate   rate
	transferredRate                rate
	putMaxMillis                   int64
	thisMinute, lastMinute         *latency
	minuteEnds                     time.Time
	items                          map[itemKey]*item
	nextView                       [len(views)]time.Time
	day                            int // now.YearDay() of the last day roll, in now's location
	putTodayMorning, putYesterday  int64
	getTodayMorning, getYesterday  int64
	pulls                          pullTable
}

// New starts counting at now for a node of cluster (the key of
// BROKER_PUT_NUMS and BROKER_GET_NUMS, as in Apache).
func New(cluster string, now time.Time) *Stats {
	s := &Stats{cluster: cluster, boot: now, thisMinute: newLatency(), minuteEnds: now.Add(time.Minute),
		items: map[itemKey]*item{}, day: now.YearDay()}
	for i, v := range views {
		s.nextView[i] = now.Add(v.every)
	}
	s.sampleRates(now)
	return s
}

// itemLocked returns the item, created at now if new. s.mu is held.
func (s *Stats) itemLocked(now time.Time, name, key string) *item {
	k := itemKey{name, key}
	it := s.items[k]
	if it == nil {
		it = newItem(now)
		s.items[k] = it
	}
	return it
}

// ObservePut counts msgs stored messages of topic with bytes stored bytes.
func (s *Stats) ObservePut(now time.Time, topic string, msgs, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.putMsgs += int64(msgs)
	s.putBytes += int64(bytes)
	s.itemLocked(now, TopicPutNums, topic).add(int64(msgs))
	s.itemLocked(now, TopicPutSize, topic).add(int64(bytes))
	s.itemLocked(now, BrokerPutNums, s.cluster).add(int64(msgs))
}

// ObserveSendResult counts one send request answered after took: its latency
// (putMessageDistributeTime, putMessageEntireTimeMax) and, when !ok, a failure.
func (s *Stats) ObserveSendResult(took time.Duration, ok bool) {
	ms := took.Milliseconds()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !ok {
		s.putFailed++
		return
	}
	s.thisMinute.add(ms)
	s.putMaxMillis = max(s.putMaxMillis, ms)
}

// ObserveGet counts one pull of group on topic answered with msgs messages of
// bytes bytes; none is a miss.
func (s *Stats) ObserveGet(now time.Time, group, topic string, msgs, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if msgs == 0 {
		s.getMiss++
		return
	}
	s.getFound++
	s.transferred += int64(msgs)
	key := topic + "@" + group
	s.itemLocked(now, GroupGetNums, key).add(int64(msgs))
	s.itemLocked(now, GroupGetSize, key).add(int64(bytes))
	s.itemLocked(now, BrokerGetNums, s.cluster).add(int64(msgs))
}

// ObservePullOffset records the offset a pull of group on a queue answered as
// the next one to pull, which GET_CONSUME_STATS reports as pullOffset. Soft
// state: a new leader learns it from the next pulls.
func (s *Stats) ObservePullOffset(group, topic string, queueID int32, next int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pulls.record(pullKey{group, topic, queueID}, next)
}

// PullOffset is the next offset this node last told group to pull from the
// queue; false when it answered no pull of it (or the table was full).
func (s *Stats) PullOffset(group, topic string, queueID int32) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pulls.get(pullKey{group, topic, queueID})
}

// GroupGetTPS is the messages per second group pulled from topic here over
// the last minute (Apache's BrokerStatsManager.tpsGroupGetNums: the minute
// view of GROUP_GET_NUMS), 0 when it pulled none.
func (s *Stats) GroupGetTPS(group, topic string, now time.Time) float64 {
	d, ok := s.Item(GroupGetNums, topic+"@"+group, now)
	if !ok {
		return 0
	}
	return d.Minute.TPS
}

// Tick samples the rates, the item views that are due, rolls the latency
// minute and, at the first tick of a new day, the day counters. The broker
// calls it once a second.
func (s *Stats) Tick(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sampleRates(now)
	for v := range views {
		if now.Before(s.nextView[v]) {
			continue
		}
		for _, it := range s.items {
			it.sampleView(v, now)
		}
		s.nextView[v] = now.Add(views[v].every)
	}
	if !now.Before(s.minuteEnds) {
		s.lastMinute, s.thisMinute = s.thisMinute, newLatency()
		s.minuteEnds = now.Add(time.Minute)
	}
	if d := now.YearDay(); d != s.day {
		s.day = d
		s.putYesterday, s.putTodayMorning = s.putTodayMorning, s.putMsgs
		s.getYesterday, s.getTodayMorning = s.getTodayMorning, s.transferred
	}
}

func (s *Stats) sampleRates(now time.Time) {
	s.putRate.add(now, s.putMsgs)
	s.foundRate.add(now, s.getFound)
	s.missRate.add(now, s.getMiss)
	s.transferredRate.add(now, s.transferred)
}

// Item is the minute, hour and day view of one item at now; false when
// nothing was ever counted under it (Apache answers "The stats <…> <…> not
// exist").
func (s *Stats) Item(name, key string, now time.Time) (ItemData, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it := s.items[itemKey{name, key}]
	if it == nil {
		return ItemData{}, false
	}
	return ItemData{Minute: it.view(0, now), Hour: it.view(1, now), Day: it.view(2, now)}, true
}

// Runtime is the part of GET_BROKER_RUNTIME_INFO's table these counters
// answer, with Apache's keys and value formats.
func (s *Stats) Runtime(now time.Time) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	lat := s.lastMinute
	if lat == nil { // the first minute: what it has so far
		lat = s.thisMinute
	}
	tps := func(r *rate, current int64) string {
		var out string
		for i, w := range rateWindows {
			if i > 0 {
				out += " "
			}
			out += JavaDouble(r.perSecond(w, now, current))
		}
		return out
	}
	total := func(found, miss float64) string { return JavaDouble(found + miss) }
	var getTotal string
	for i, w := range rateWindows {
		if i > 0 {
			getTotal += " "
		}
		getTotal += total(s.foundRate.perSecond(w, now, s.getFound), s.missRate.perSecond(w, now, s.getMiss))
	}
	transferred := tps(&s.transferredRate, s.transferred)
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	return map[string]string{
		"bootTimestamp":            i64(s.boot.UnixMilli()),
		"runtime":                  formatRuntime(now.Sub(s.boot)),
		"putMessageEntireTimeMax":  i64(s.putMaxMillis),
		"putMessageTimesTotal":     i64(s.putMsgs),
		"putMessageFailedTimes":    i64(s.putFailed),
		"putMessageSizeTotal":      i64(s.putBytes),
		"putMessageAverageSize":    JavaDouble(float64(s.putBytes) / float64(max(s.putMsgs, 1))),
		"putMessageDistributeTime": lat.distribution(),
		"putLatency99":             fmt.Sprintf("%.2f", lat.percentile(0.99)),
		"putLatency999":            fmt.Sprintf("%.2f", lat.percentile(0.999)),
		"putTps":                   tps(&s.putRate, s.putMsgs),
		"getFoundTps":              tps(&s.foundRate, s.getFound),
		"getMissTps":               tps(&s.missRate, s.getMiss),
		"getTotalTps":              getTotal,
		// 4.9 spells it getTransferedTps, 5.x getTransferredTps; tools read one each.
		"getTransferedTps":            transferred,
		"getTransferredTps":           transferred,
		"msgPutTotalTodayNow":         i64(s.putMsgs),
		"msgPutTotalTodayMorning":     i64(s.putTodayMorning),
		"msgPutTotalYesterdayMorning": i64(s.putYesterday),
		"msgGetTotalTodayNow":         i64(s.transferred),
		"msgGetTotalTodayMorning":     i64(s.getTodayMorning),
		"msgGetTotalYesterdayMorning": i64(s.getYesterday),
	}
}

// formatRuntime is Apache's "[ 0 days, 1 hours, 2 minutes, 3 seconds ]".
func formatRuntime(d time.Duration) string {
	secs := int64(d / time.Second)
	return fmt.Sprintf("[ %d days, %d hours, %d minutes, %d seconds ]", secs/86400, secs%86400/3600, secs%3600/60, secs%60)
}

// JavaDouble formats f as Java's Double.toString does for the values rates
// take: the shortest decimal that reads back as f, always with a fractional
// part ("0.0", "12.5"), so Java's parseDouble and a person read the same.
func JavaDouble(f float64) string {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	for _, c := range s {
		if c == '.' || c == 'N' || c == 'I' {
			return s
		}
	}
	return s + ".0"
}
