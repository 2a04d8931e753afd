#!/usr/bin/env bash
# Seeds the fuzz corpora that start from files of this repository (run from the repository root):
#   manifest        every manifest under capabilities/
#   knowledge_file  every Markdown file of the knowledge fixtures and docs/, each prefixed with
#                   the two bytes the target reads first (its folder, its file name), chosen to
#                   match the kind the file was written for.
# The corpora are not committed (fuzz/.gitignore).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p fuzz/corpus/manifest fuzz/corpus/knowledge_file
cp capabilities/*.yaml fuzz/corpus/manifest/
n=0
while IFS= read -r f; do
    n=$((n + 1))
    case "$f" in
        */adr/*) prefix='\001\000' ;;                 # docs/adr, 0001-first.md
        */SKILL.md) prefix='\003\001' ;;              # a skill folder, SKILL.md
        */.seneschal/knowledge/*) prefix='\000\003' ;; # the generic folder, notes.md
        *) prefix='\002\002' ;;                       # docs/guides, getting-started.md
    esac
    { printf "$prefix"; cat "$f"; } > "fuzz/corpus/knowledge_file/seed-$n"
done < <(find tests/fixtures/knowledge docs -name '*.md' | sort)
echo "seeded $(ls fuzz/corpus/manifest | wc -l) manifests and $n knowledge files"
