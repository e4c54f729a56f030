#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# skc plan --format dot|svg|html: the pictures, drawn by Graphviz and by skforge's own layout, on
# the examples, on a graph with every edge kind and on hostile operator names.
load helpers

EX="$SKFORGE_SOURCE_DIR/share/skforge/examples"

# lanes_graph DIR: two streams, a left-out operator, barriers of every width, an event inside a
# SuperKernel and one between launches, an early-start pair.
lanes_graph() {
    mkdir -p "$1"
    cp -r "$EX/two_stream/kernels" "$1/"
    cat >"$1/graph.yaml" <<'YAML'
name: lanes
npu_arch: dav-2201
soc_version: Ascend910B1
inputs:
  - {name: x, shape: [16, 256], dtype: float16}
  - {name: w, shape: [256, 256], dtype: float16}
scopes:
  sk_main: "stream-fusion=1:early-start=0"
  sk_tail: "early-start=1"
ops:
  - {name: pre, type: SoftmaxV2, stream_id: 0, kernel: {json_path: kernels/softmax.json},
     inputs: [x], outputs: [{name: p0, shape: [16, 256], dtype: float16}], send_event_list: [7], no_fusion: true}
  - {name: a, type: RotaryPositionEmbedding, stream_id: 1, kernel: {json_path: kernels/rope.json},
     inputs: [x], outputs: [{name: a1, shape: [16, 256], dtype: float16}], scope: sk_main}
  - {name: b, type: SoftmaxV2, stream_id: 1, kernel: {json_path: kernels/softmax.json},
     inputs: [a1], outputs: [{name: b1, shape: [16, 256], dtype: float16}], send_event_list: [1], scope: sk_main}
  - {name: c, type: MatMul, stream_id: 0, kernel: {json_path: kernels/matmul.json},
     inputs: [x, w], outputs: [{name: c1, shape: [16, 256], dtype: float16}], recv_event_list: [7], scope: sk_main}
  - {name: d, type: MatMul, stream_id: 0, kernel: {json_path: kernels/matmul.json},
     inputs: [c1, w], outputs: [{name: d1, shape: [16, 256], dtype: float16}], scope: sk_main}
  - {name: e, type: Add, stream_id: 0, kernel: {json_path: kernels/add.json},
     inputs: [d1, b1], outputs: [{name: e1, shape: [16, 256], dtype: float16}], recv_event_list: [1], scope: sk_main}
  - {name: g, type: SoftmaxV2, stream_id: 0, kernel: {json_path: kernels/softmax.json},
     inputs: [e1], outputs: [{name: g1, shape: [16, 256], dtype: float16}], scope: sk_tail}
  - {name: h, type: SoftmaxV2, stream_id: 0, kernel: {json_path: kernels/softmax.json},
     inputs: [g1], outputs: [{name: h1, shape: [16, 256], dtype: float16}], scope: sk_tail}
YAML
}

# hostile_graph DIR: operator and tensor names full of markup, quotes, backslashes, DOT escapes
# and control characters.
hostile_graph() {
    mkdir -p "$1"
    cp -r "$EX/two_stream/kernels" "$1/"
    cat >"$1/graph.yaml" <<'YAML'
name: hostile
npu_arch: dav-2201
soc_version: Ascend910B1
inputs:
  - {name: "x<&>\"'", shape: [16, 256], dtype: float16}
  - {name: pos, shape: [16, 256], dtype: float16}
  - {name: w, shape: [256, 256], dtype: float16}
scopes:
  sk_dual: "stream-fusion=1:early-start=1"
ops:
  - {name: "r\"o\\pe</script><!-- ]]> &amp; {a|b} \\n", type: RotaryPositionEmbedding, stream_id: 1,
     kernel: {json_path: kernels/rope.json}, inputs: [pos],
     outputs: [{name: "pe\"&", shape: [16, 256], dtype: float16}], send_event_list: [1], scope: sk_dual}
  - {name: "line\nbreak\x01", type: MatMul, stream_id: 0, kernel: {json_path: kernels/matmul.json},
     inputs: ["x<&>\"'", w], outputs: [{name: h, shape: [16, 256], dtype: float16}], scope: sk_dual}
  - {name: "\\N\\G\\l&lt;<b>|{}", type: Add, stream_id: 0, kernel: {json_path: kernels/add.json},
     inputs: [h, "pe\"&"], outputs: [{name: h2, shape: [16, 256], dtype: float16}],
     recv_event_list: [1], scope: sk_dual}
  - {name: "<script>alert(1)</script>", type: SoftmaxV2, stream_id: 0,
     kernel: {json_path: kernels/softmax.json}, inputs: [h2],
     outputs: [{name: probs, shape: [16, 256], dtype: float16}], no_fusion: true}
YAML
}

# The names above as they must be shown (control characters as \xNN), one per line.
hostile_names() {
    cat <<'EOF'
r"o\pe</script><!-- ]]> &amp; {a|b} \n
line\x0abreak\x01
\N\G\l&lt;<b>|{}
<script>alert(1)</script>
EOF
}

need_dot() {
    command -v dot >/dev/null || skip "Graphviz (dot) is not installed"
}

# svg_texts FILE: every <text> of an SVG (parsed as XML), one per line, then every tooltip.
svg_texts() {
    python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
for el in root.iter():
    tag = el.tag.split('}')[-1]
    if tag == 'text':
        print(''.join(el.itertext()))
    elif tag in ('a', 'title'):
        t = el.get('{http://www.w3.org/1999/xlink}title') if tag == 'a' else el.text
        if t:
            print('TIP ' + t)
PY
}

# check_html FILE: well-formed as XML and as HTML (every element closed in order), one inline
# script, nothing loaded from outside; prints the text of every table cell.
check_html() {
    python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
from html.parser import HTMLParser
text = open(sys.argv[1], encoding='utf-8').read()
root = ET.fromstring(text.split('\n', 1)[1])      # after <!DOCTYPE html>
VOID = {'meta', 'input', 'br', 'img', 'link', 'hr'}
class Strict(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.scripts = [], 0
    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            assert k not in ('src', 'href') and not k.startswith('on'), (tag, k, v)
        if tag == 'script':
            self.scripts += 1
        if tag not in VOID:
            self.stack.append(tag)
    def handle_startendtag(self, tag, attrs):
        for k, v in attrs:
            assert k not in ('src', 'href') and not k.startswith('on'), (tag, k, v)
    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, (tag, self.stack[-5:])
        self.stack.pop()
p = Strict()
p.feed(text)
p.close()
assert p.stack == [], p.stack
assert p.scripts == 1, p.scripts
assert 'http://' not in text.replace('http://www.w3.org/2000/svg', '').replace(
    'http://www.w3.org/1999/xlink', ''), 'an external reference'
for td in root.iter('td'):
    print('TD ' + ''.join(td.itertext()))
for svg in root.iter('{http://www.w3.org/2000/svg}svg'):
    ET.ElementTree(svg).write('picture.svg')
PY
}

@test "plan --format dot: Graphviz draws real line breaks, lanes, events, barriers, early-start pairs and arena peaks" {
    need_dot
    lanes_graph g
    "$SKC" plan g/graph.yaml --format dot >g.dot
    dot -Tsvg g.dot >g.svg
    svg_texts g.svg >texts
    [ "$(grep -cF '\n' texts)" -eq 0 ]
    for want in "stream 0" "stream 1" "event 7" "event 1" "barrier vector" "barrier cube" \
        "barrier full" "early start" "NO_FUSION_MARK" "RotaryPositionEmbedding"; do
        grep -qxF "$want" texts || { echo "missing: $want"; false; }
    done
    "$SKC" plan g/graph.yaml --format json >plan.json
    for peak in $(python3 -c "import json; [print(s['arena']['peak']) for s in json.load(open('plan.json'))['segments']]"); do
        grep -q "^arena peak $peak B" texts
    done
}

@test "plan --format dot of the examples renders; every barrier and early-start pair is drawn" {
    need_dot
    for ex in two_stream decoder; do
        "$SKC" plan "$EX/$ex/graph.yaml" --format dot >"$ex.dot"
        dot -Tsvg "$ex.dot" >"$ex.svg"
        svg_texts "$ex.svg" >"$ex.texts"
        [ "$(grep -cF '\n' "$ex.texts")" -eq 0 ]
        "$SKC" plan "$EX/$ex/graph.yaml" --format json >"$ex.json"
        read -r barriers pairs events < <(python3 -c "
import json
d = json.load(open('$ex.json'))
b = sum(s['barriers'][k] for s in d['segments'] for k in ('vector', 'cube', 'full'))
print(b, sum(s['early_start_pairs'] for s in d['segments']), sum(s['event_pairs'] for s in d['segments']))")
        [ "$(grep -c '^barrier ' "$ex.texts")" -eq "$barriers" ]
        [ "$(grep -cx 'early start' "$ex.texts")" -eq "$pairs" ]
        [ "$(grep -c '^event ' "$ex.texts")" -ge "$events" ]
    done
    grep -qx "stream 1" two_stream.texts
    grep -qx "event 1" two_stream.texts
}

@test "plan --format dot shows hostile names exactly, in labels and tooltips" {
    need_dot
    hostile_graph g
    "$SKC" plan g/graph.yaml --format dot >g.dot
    dot -Tsvg g.dot >g.svg 2>err
    svg_texts g.svg >texts
    while IFS= read -r name; do
        grep -qxF -- "$name" texts || { echo "label missing: $name"; false; }
        grep -qF -- "TIP $name (" texts || { echo "tooltip missing: $name"; false; }
    done < <(hostile_names)
    grep -qxF 'TIP tensor pe"&' texts
}

@test "plan --format html is one well-formed page with the picture, the tables and every reason" {
    lanes_graph g
    for layout in builtin dot; do
        [ "$layout" = builtin ] || command -v dot >/dev/null || continue
        "$SKC" plan g/graph.yaml --format html --layout "$layout" >"$layout.html"
        check_html "$layout.html" >cells
        grep -qxF "TD NO_FUSION_MARK" cells
        grep -qxF "TD marked no_fusion" cells
        grep -q "^TD set/wait pair inside sk_main, flag at parameter offset [0-9]" cells
        grep -qxF "TD between launches" cells
        for kind in vector cube full; do grep -qxF "TD $kind" cells; done
        grep -qxF "TD early-start pair" cells
        python3 -c "import xml.etree.ElementTree as ET; ET.parse('picture.svg')"
        svg_texts picture.svg >texts
        grep -qx "stream 1" texts
        grep -qx "barrier cube" texts
    done
    grep -q "Laid out by skforge&#39;s built-in layout" builtin.html
    [ "$(grep -c '<link\|<iframe\|<object\|@import\|url(http' builtin.html)" -eq 0 ]
}

@test "plan --format html escapes hostile names and stays well-formed" {
    hostile_graph g
    "$SKC" plan g/graph.yaml --format html --layout builtin >h.html
    check_html h.html >cells
    while IFS= read -r name; do
        grep -qxF -- "TD $name" cells || { echo "cell missing: $name"; false; }
    done < <(hostile_names)
    svg_texts picture.svg >texts
    while IFS= read -r name; do
        grep -qF -- "TIP $name (" texts || { echo "tooltip missing: $name"; false; }
    done < <(hostile_names)
    grep -qxF 'line\x0abreak\x01' texts
    [ "$(grep -c '<script' h.html)" -eq 1 ]
}

@test "the text plan shows control characters in names as '?', never raw to the terminal" {
    hostile_graph g
    "$SKC" plan g/graph.yaml >plan.txt
    grep -qF 'line?break?' plan.txt
    # Nothing but printable text, newlines and spaces: no escape sequence reaches a terminal.
    [ "$(LC_ALL=C tr -d '\n\040-\176\200-\377' <plan.txt | wc -c)" -eq 0 ]
}

@test "plan --format svg: the built-in layout is well-formed and deterministic, with a lane per stream" {
    lanes_graph g
    "$SKC" plan g/graph.yaml --format svg --layout builtin >a.svg
    "$SKC" plan g/graph.yaml --format svg --layout builtin -o b.svg
    cmp a.svg b.svg
    head -n 1 a.svg | grep -qF '<?xml version="1.0" encoding="UTF-8"?>'
    svg_texts a.svg >texts
    for want in "stream 0" "stream 1" "event 7" "event 1" "barrier vector" "barrier cube" \
        "barrier full" "early start" "NO_FUSION_MARK" "legend"; do
        grep -qxF "$want" texts || { echo "missing: $want"; false; }
    done
}

@test "--layout auto falls back to the built-in layout without Graphviz; --layout dot refuses" {
    lanes_graph g
    mkdir empty
    PATH="$PWD/empty" "$SKC" plan g/graph.yaml --format html >auto.html
    grep -q "Laid out by skforge&#39;s built-in layout" auto.html
    PATH="$PWD/empty" run "$SKC" plan g/graph.yaml --format svg --layout dot -o x.svg
    [ "$status" -eq 1 ]
    [[ "$output" == *"--layout dot: cannot run 'dot'"*"Debian package graphviz"*"--layout builtin"* ]]
    [ ! -e x.svg ]
    if command -v dot >/dev/null; then
        "$SKC" plan g/graph.yaml --format html >with.html
        grep -q "Laid out by Graphviz dot" with.html
    fi
}

@test "plan refuses an unknown --format or --layout with a usage error" {
    run "$SKC" plan "$EX/two_stream/graph.yaml" --format png
    [ "$status" -eq 2 ]
    [[ "$output" == *"--format must be text, json, dot, svg or html, not 'png'"* ]]
    run "$SKC" plan "$EX/two_stream/graph.yaml" --format html --layout neato
    [ "$status" -eq 2 ]
    [[ "$output" == *"--layout must be auto, dot or builtin, not 'neato'"* ]]
}

@test "plan -o writes the same bytes as standard output, for every format" {
    for f in text json dot svg html; do
        "$SKC" plan "$EX/two_stream/graph.yaml" --format "$f" --layout builtin >"out.$f"
        "$SKC" plan "$EX/two_stream/graph.yaml" --format "$f" --layout builtin -o "file.$f"
        cmp "out.$f" "file.$f"
    done
}

@test "the HTML page runs in a headless browser: the filter hides rows" {
    browser=$(command -v chromium || command -v chromium-browser || true)
    [ -n "$browser" ] || skip "no chromium here (the page is checked with parsers above)"
    lanes_graph g
    "$SKC" plan g/graph.yaml --format html --layout builtin >p.html
    # The page with the filter already typed in: the script must run and hide rows.
    sed 's|placeholder=|value="marked no_fusion" placeholder=|' p.html >q.html
    # A fresh profile and no background traffic: this host's network is closed, and CI runs as
    # root (hence --no-sandbox).
    timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$PWD/profile" --dump-dom "file://$PWD/q.html" >dom.html 2>browser.err
    grep -q 'id="count">[0-9]* of [0-9]* rows<' dom.html
    grep -q 'style="display: none;"' dom.html
}

@test "notify/wait with AICPU tiling and prefetch operators: drawn in both layouts and listed with their slots" {
    G="$SKFORGE_SOURCE_DIR/test/fixtures/tiling_sink/graph.yaml"
    "$SKC" plan "$G" --format json >plan.json
    python3 - >want <<'PY'
import json
for nw in json.load(open('plan.json'))['notify_wait']:
    def end(seg, slot, what):
        return f"{what} outside the SuperKernels" if seg is None else f"{what} slot at parameter offset {slot} of {seg}"
    print(f"notify/wait {nw['event']}")
    print("TD notify/wait in memory: " + end(nw['notify_segment'], nw['notify_slot'], 'notify') +
          ", " + end(nw['wait_segment'], nw['wait_slot'], 'wait'))
PY
    [ "$(grep -c '^notify/wait ' want)" -eq 3 ]
    "$SKC" plan "$G" --format svg --layout builtin >b.svg
    svg_texts b.svg >texts
    grep '^notify/wait ' want | while IFS= read -r label; do grep -qxF "$label" texts; done
    grep -qF "TIP scale_tiling (RowTiling (aicpu_tiling), stream 1) left out: OP_UNSUPPORT" texts
    if command -v dot >/dev/null; then
        "$SKC" plan "$G" --format dot | dot -Tsvg >d.svg
        svg_texts d.svg >dtexts
        grep '^notify/wait ' want | while IFS= read -r label; do grep -qxF "$label" dtexts; done
    fi
    "$SKC" plan "$G" --format html --layout builtin >p.html
    check_html p.html >cells
    grep '^TD ' want | while IFS= read -r cell; do grep -qxF "$cell" cells; done
    grep -q "^TD notify 1 to scale_tiling (slot [0-9]*)" cells
}
