#!/usr/bin/env bash
# Builds apache/rocketmq-exporter and apache/rocketmq-dashboard from sources this
# repository does not contain, under integration/ecosystem/target/ (ignored by git),
# and installs playwright-core for the browser driver there too.
#
#   ROCKETMQ_EXPORTER_SRC   a checkout of apache/rocketmq-exporter, or its git dir (bare mirror)
#   ROCKETMQ_DASHBOARD_SRC  a checkout of apache/rocketmq-dashboard, or its git dir
#   ECOSYSTEM_REQUIRE=1     a missing source is an error (exit 2) instead of a skip (exit 0)
#   MVN, NPM                other Maven / npm binaries
#
# Neither project is published on Maven Central or npm, so the sources must come
# from somewhere; a git dir is exported with `git archive HEAD`, a checkout is
# copied without its node_modules/ and target/. Nothing is copied into tracked files.
#
# The dashboard's pom runs frontend-maven-plugin, which downloads Node into
# target/ before `npm install` and `npm run build`. Here the front end is built with
# the machine's npm (npm ci, then npm run build in frontend-new/) and Maven runs with
# -Dskip.installnodenpm -Dskip.npm; the pom's antrun step then copies
# frontend-new/build into the jar's public/ as usual.
#
# Prints, last, the lines the test reads (also written to target/jars.env):
#   ECOSYSTEM_EXPORTER_JAR=…  ECOSYSTEM_DASHBOARD_JAR=…  ECOSYSTEM_BROWSER_DIR=…
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${ECOSYSTEM_BUILD_DIR:-$here/target}"
MVN="${MVN:-mvn}"
NPM="${NPM:-npm}"
require="${ECOSYSTEM_REQUIRE:-0}"

say() { printf 'ecosystem: %s\n' "$*" >&2; }

missing=()
[[ -n "${ROCKETMQ_EXPORTER_SRC:-}" ]] || missing+=(ROCKETMQ_EXPORTER_SRC)
[[ -n "${ROCKETMQ_DASHBOARD_SRC:-}" ]] || missing+=(ROCKETMQ_DASHBOARD_SRC)
if ((${#missing[@]})); then
	say "cannot build the exporter and the dashboard: ${missing[*]} not set."
	say "Neither apache/rocketmq-exporter nor apache/rocketmq-dashboard is published on Maven Central or npm,"
	say "so their sources must be given: a checkout or a git dir each (see integration/ecosystem/README.md)."
	say "Their requests are still covered by AdminExtFallbackTest in integration/java (make integration-java)."
	if [[ "$require" == 1 ]]; then
		exit 2
	fi
	exit 0
fi

# export_src NAME SRC: fresh sources of SRC in $out/src/NAME; prints the commit (or "unknown").
export_src() {
	local name="$1" src="$2" dst="$out/src/$1" commit=unknown
	if [[ ! -e "$src" ]]; then
		say "$name: $src does not exist"
		exit 2
	fi
	rm -rf "$dst"
	mkdir -p "$dst"
	if [[ -f "$src/pom.xml" ]]; then
		if git -C "$src" rev-parse --git-dir >/dev/null 2>&1 && [[ -z "$(git -C "$src" status --porcelain 2>/dev/null)" ]]; then
			commit="$(git -C "$src" rev-parse HEAD)"
			git -C "$src" archive HEAD | tar -x -C "$dst"
		else
			# A checkout with local changes (or no git): copy what is there, minus build output.
			tar -C "$src" --exclude=./node_modules --exclude=./frontend-new/node_modules --exclude=./target \
				--exclude=./frontend-new/build -c . | tar -x -C "$dst"
			commit="$(git -C "$src" rev-parse HEAD 2>/dev/null || echo unknown)-worktree"
		fi
	elif git --git-dir="$src" rev-parse HEAD >/dev/null 2>&1; then
		commit="$(git --git-dir="$src" rev-parse HEAD)"
		git --git-dir="$src" archive HEAD | tar -x -C "$dst"
	else
		say "$name: $src is neither a checkout (no pom.xml) nor a git dir"
		exit 2
	fi
	echo "$commit"
}

# up_to_date NAME COMMIT JAR: the jar exists and was built from COMMIT.
up_to_date() {
	[[ -f "$3" && -f "$out/jars/$1.commit" && "$(cat "$out/jars/$1.commit")" == "$2" && "$2" != *-worktree && "$2" != unknown ]]
}

src_commit() { # the commit SRC points at, without exporting it
	local src="$1"
	if [[ -f "$src/pom.xml" ]]; then
		if git -C "$src" rev-parse --git-dir >/dev/null 2>&1 && [[ -z "$(git -C "$src" status --porcelain 2>/dev/null)" ]]; then
			git -C "$src" rev-parse HEAD
		else
			echo unknown
		fi
	else
		git --git-dir="$src" rev-parse HEAD 2>/dev/null || echo unknown
	fi
}

mkdir -p "$out/jars" "$out/logs"
mvn_flags=(-B -q -DskipTests -Dcheckstyle.skip -Drat.skip -Djacoco.skip -Dmaven.javadoc.skip=true)

exporter_jar="$out/jars/rocketmq-exporter.jar"
c="$(src_commit "$ROCKETMQ_EXPORTER_SRC")"
if up_to_date exporter "$c" "$exporter_jar"; then
	say "exporter: up to date ($c)"
else
	c="$(export_src exporter "$ROCKETMQ_EXPORTER_SRC")"
	say "exporter: building $c with Maven (log: $out/logs/exporter-mvn.log)"
	if ! (cd "$out/src/exporter" && "$MVN" "${mvn_flags[@]}" package >"$out/logs/exporter-mvn.log" 2>&1); then
		tail -40 "$out/logs/exporter-mvn.log" >&2
		say "exporter: Maven build failed"
		exit 1
	fi
	# spring-boot-maven-plugin's repackaged jar carries the classifier exec.
	cp "$(ls "$out"/src/exporter/target/rocketmq-exporter-*-exec.jar | head -1)" "$exporter_jar"
	echo "$c" >"$out/jars/exporter.commit"
fi

dashboard_jar="$out/jars/rocketmq-dashboard.jar"
c="$(src_commit "$ROCKETMQ_DASHBOARD_SRC")"
if up_to_date dashboard "$c" "$dashboard_jar"; then
	say "dashboard: up to date ($c)"
else
	c="$(export_src dashboard "$ROCKETMQ_DASHBOARD_SRC")"
	fe="$out/src/dashboard/frontend-new"
	say "dashboard: front end with the machine's npm ($("$NPM" --version)), node $(node --version) (log: $out/logs/dashboard-npm.log)"
	# Its package-lock.json resolves every package at registry.npmmirror.com;
	# --replace-registry-host=always fetches the same tarballs (same integrity
	# hashes) from the configured registry instead. CI=true would turn
	# react-scripts' lint warnings into build errors.
	if ! (cd "$fe" && CI=false "$NPM" ci --no-audit --no-fund --replace-registry-host=always \
		>"$out/logs/dashboard-npm.log" 2>&1 &&
		CI=false GENERATE_SOURCEMAP=false "$NPM" run build >>"$out/logs/dashboard-npm.log" 2>&1); then
		tail -40 "$out/logs/dashboard-npm.log" >&2
		say "dashboard: front-end build failed"
		exit 1
	fi
	say "dashboard: building $c with Maven, frontend-maven-plugin skipped (log: $out/logs/dashboard-mvn.log)"
	if ! (cd "$out/src/dashboard" && "$MVN" "${mvn_flags[@]}" -Dskip.installnodenpm -Dskip.npm package \
		>"$out/logs/dashboard-mvn.log" 2>&1); then
		tail -40 "$out/logs/dashboard-mvn.log" >&2
		say "dashboard: Maven build failed"
		exit 1
	fi
	jar="$(ls "$out"/src/dashboard/target/rocketmq-dashboard-*.jar | grep -v -e sources -e original | head -1)"
	# Not `unzip | grep -q`: grep's early exit fails the pipeline under pipefail.
	if ! unzip -l "$jar" >"$out/logs/dashboard-jar.txt" || ! grep -q 'BOOT-INF/classes/public/index.html' "$out/logs/dashboard-jar.txt"; then
		say "dashboard: $jar has no public/index.html: the front end did not reach the jar"
		exit 1
	fi
	cp "$jar" "$dashboard_jar"
	echo "$c" >"$out/jars/dashboard.commit"
	rm -rf "$fe/node_modules" # 1 GB, only needed for the build
fi

browser="$out/browser"
if [[ ! -f "$browser/node_modules/playwright-core/package.json" ]] || ! cmp -s "$here/browser/package.json" "$browser/package.json"; then
	say "browser: installing playwright-core (no browser download: the test uses the system Chromium)"
	mkdir -p "$browser"
	cp "$here/browser/package.json" "$here/browser/package-lock.json" "$browser/"
	(cd "$browser" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 "$NPM" ci --no-audit --no-fund >"$out/logs/browser-npm.log" 2>&1) || {
		tail -20 "$out/logs/browser-npm.log" >&2
		exit 1
	}
fi

{
	echo "ECOSYSTEM_EXPORTER_JAR=$exporter_jar"
	echo "ECOSYSTEM_DASHBOARD_JAR=$dashboard_jar"
	echo "ECOSYSTEM_BROWSER_DIR=$browser"
} | tee "$out/jars.env"
