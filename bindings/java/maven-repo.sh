#!/usr/bin/env bash
# Writes a Maven repository folder holding org.futoin:futoin-async from what
# bindings/java/build.sh made (the jar, the POM, the sources and javadoc
# jars), laid out as Maven reads it:
#
#   REPO/org/futoin/futoin-async/maven-metadata.xml
#   REPO/org/futoin/futoin-async/VERSION/futoin-async-VERSION.{jar,pom}
#   REPO/org/futoin/futoin-async/VERSION/futoin-async-VERSION-{sources,javadoc}.jar
#   (each with .sha1 and .md5 files)
#
# The folder works without any network and without Maven's install plug-in
# (`mvn install:install-file` needs the plug-in, which an offline Maven may
# not have): name it as a repository, `<url>file:///…/maven-repo</url>`, in
# the consuming project or settings.xml (README "Install": with Debian's
# Maven offline, tests/consumers/maven shows the settings), or use it as
# the local repository itself (-Dmaven.repo.local). Debian packages put the
# same layout under /usr/share/maven-repo (libfutoin-async-java).
#
# usage: bindings/java/maven-repo.sh [OUT_DIR] [REPO]
#   OUT_DIR  build.sh's output (default: build/java)
#   REPO     the repository folder to write into (default: OUT_DIR/maven-repo);
#            other artifacts already in it are kept
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:-$repo/build/java}
dest=${2:-$out/maven-repo}
version=$(sed -nE "s/^[[:space:]]*version:[[:space:]]*'([^']+)'.*/\1/p" "$repo/meson.build" | head -n1)
group=org.futoin artifact=futoin-async
for f in "$artifact-$version.jar" "$artifact-$version.pom"; do
  if [ ! -f "$out/$f" ]; then
    echo "maven-repo.sh: $out/$f missing: run bindings/java/build.sh first" >&2
    exit 1
  fi
done
dir=$dest/${group//.//}/$artifact
mkdir -p "$dir/$version"
for f in "$artifact-$version.jar" "$artifact-$version.pom" \
         "$artifact-$version-sources.jar" "$artifact-$version-javadoc.jar"; do
  [ -f "$out/$f" ] || continue
  cp "$out/$f" "$dir/$version/$f"
done
# the versions already there (an older one written before) stay listed
versions=$(cd "$dir" && for v in */; do v=${v%/}; [ -f "$v/$artifact-$v.pom" ] && echo "$v"; done | sort -V)
latest=$(tail -n1 <<<"$versions")
{
  echo '<?xml version="1.0" encoding="UTF-8"?>'
  echo '<metadata>'
  echo "  <groupId>$group</groupId>"
  echo "  <artifactId>$artifact</artifactId>"
  echo '  <versioning>'
  echo "    <latest>$latest</latest>"
  echo "    <release>$latest</release>"
  echo '    <versions>'
  while read -r v; do echo "      <version>$v</version>"; done <<<"$versions"
  echo '    </versions>'
  echo "    <lastUpdated>$(date -u -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}" +%Y%m%d%H%M%S)</lastUpdated>"
  echo '  </versioning>'
  echo '</metadata>'
} >"$dir/maven-metadata.xml"
for f in "$dir/maven-metadata.xml" "$dir/$version"/*.jar "$dir/$version"/*.pom; do
  sha1sum <"$f" | cut -d' ' -f1 >"$f.sha1"
  md5sum <"$f" | cut -d' ' -f1 >"$f.md5"
done
echo "maven-repo: $group:$artifact:$version in $dest"
