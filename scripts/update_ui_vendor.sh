#!/usr/bin/env bash
# Refresh the owner-graph page's vendored libraries (src/kubegc/tools/ui/static/vendor/)
# from the npm registry: built, minified files and their licences, nothing else.
#   scripts/update_ui_vendor.sh [CYTOSCAPE_VERSION] [CYTOSCAPE_DAGRE_VERSION]
# Then run the browser tests (tests/e2e/test_ui_browser.py) and commit the result.
set -euo pipefail
cytoscape=${1:-3.34.4}
cytoscape_dagre=${2:-4.0.1}
vendor="$(cd "$(dirname "$0")/.." && pwd)/src/kubegc/tools/ui/static/vendor"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
npm pack --silent "cytoscape@$cytoscape" "cytoscape-dagre@$cytoscape_dagre" >/dev/null
# cytoscape-dagre's dist bundles @dagrejs/dagre and @dagrejs/graphlib: ship their licences
dagre=$(npm view "cytoscape-dagre@$cytoscape_dagre" 'dependencies.@dagrejs/dagre' | tr -d '^~')
dagre=$(npm view "@dagrejs/dagre@$dagre" version | tail -1 | awk '{print $NF}' | tr -d "'")
graphlib=$(npm view "@dagrejs/dagre@$dagre" 'dependencies.@dagrejs/graphlib' | tr -d '^~')
npm pack --silent "@dagrejs/dagre@$dagre" "@dagrejs/graphlib@$graphlib" >/dev/null
for tgz in *.tgz; do mkdir "${tgz%.tgz}"; tar xzf "$tgz" -C "${tgz%.tgz}" --strip-components 1; done
cp "cytoscape-$cytoscape/dist/cytoscape.min.js" "$vendor/"
cp "cytoscape-$cytoscape/LICENSE" "$vendor/cytoscape.LICENSE.txt"
cp "cytoscape-dagre-$cytoscape_dagre/dist/cytoscape-dagre.min.js" "$vendor/"
cp "cytoscape-dagre-$cytoscape_dagre/LICENSE" "$vendor/cytoscape-dagre.LICENSE.txt"
cp "dagrejs-dagre-$dagre/LICENSE" "$vendor/dagre.LICENSE.txt"
cp "dagrejs-graphlib-$graphlib/LICENSE" "$vendor/graphlib.LICENSE.txt"
cat > "$vendor/VERSIONS.txt" <<VERSIONS
cytoscape $cytoscape (MIT) dist/cytoscape.min.js
cytoscape-dagre $cytoscape_dagre (MIT) dist/cytoscape-dagre.min.js, which bundles
  @dagrejs/dagre and @dagrejs/graphlib (MIT; licences taken from $dagre and $graphlib)
VERSIONS
(cd "$vendor" && sha256sum ./*.js >> VERSIONS.txt)
echo "updated $vendor:"
cat "$vendor/VERSIONS.txt"
