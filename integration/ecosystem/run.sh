#!/usr/bin/env bash
# make integration-dashboard: builds the exporter and the dashboard (build.sh, same
# variables), then runs EcosystemToolsTest (integration/java) with their jars against
# a real rocketraft group; the dashboard's screenshots go to docs/compatibility/.
# Without ROCKETMQ_EXPORTER_SRC / ROCKETMQ_DASHBOARD_SRC it says why and exits 0
# (2 with ECOSYSTEM_REQUIRE=1). ROCKETRAFT_BIN names the binary (make sets it).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
MVN="${MVN:-mvn}"

jars="$("$here/build.sh")"
if [[ -z "$jars" ]]; then
	exit 0 # build.sh said why on stderr
fi
eval "$(printf '%s\n' "$jars" | grep -E '^ECOSYSTEM_[A-Z_]+=' | sed -E 's/^([A-Z_]+)=(.*)$/\1="\2"/')"
: "${ROCKETRAFT_BIN:?ROCKETRAFT_BIN must name the rocketraft binary (make integration-dashboard sets it)}"

shots="${ECOSYSTEM_SCREENSHOTS:-$repo/docs/compatibility}"
ROCKETRAFT_BIN="$ROCKETRAFT_BIN" "$MVN" -B -ntp -f "$repo/integration/java/pom.xml" test \
	-Dtest=EcosystemToolsTest -Dsurefire.failIfNoSpecifiedTests=false -Dtls.skip=true -Dheader.skip=true \
	-Decosystem.enabled=true \
	-Decosystem.exporter.jar="$ECOSYSTEM_EXPORTER_JAR" \
	-Decosystem.dashboard.jar="$ECOSYSTEM_DASHBOARD_JAR" \
	-Decosystem.browser.dir="$ECOSYSTEM_BROWSER_DIR" \
	-Decosystem.script="$here/dashboard.cjs" \
	-Decosystem.screenshots="$shots"
