"""The HTML report's stylesheet, inlined into the page (no font or file is fetched)."""

from __future__ import annotations

#: forbids every load: the page is one file and must stay quiet on an air-gapped network
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)

STYLESHEET = """
:root { --ok: #15803d; --bad: #b91c1c; --muted: #6b7280; --line: #e5e7eb; --run: #1d4ed8; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans",
       "Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei", sans-serif; color: #111827;
       background: #f9fafb; }
main { max-width: 1240px; margin: 0 auto; padding: 20px 24px 48px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 28px 0 10px; border-bottom: 1px solid var(--line);
     padding-bottom: 4px; }
h3 { font-size: 15px; margin: 14px 0 6px; }
p { margin: 6px 0; }
.muted { color: var(--muted); }
.verdict { display: inline-block; font-weight: 700; padding: 4px 10px; border-radius: 6px;
           margin: 6px 0; }
.verdict.pass { background: #dcfce7; color: var(--ok); }
.verdict.fail { background: #fee2e2; color: var(--bad); }
dl.run { display: grid; gap: 2px 14px; font-size: 14px; margin: 8px 0 14px;
         grid-template-columns: max-content minmax(0, 1fr) max-content minmax(0, 1fr); }
dl.run dt { color: var(--muted); }
dl.run dd { margin: 0; overflow-wrap: anywhere; }
.overview { display: flex; flex-wrap: wrap; gap: 20px; align-items: flex-start; }
.panel { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; }
figure.chart-panel { margin: 0; flex: 0 1 600px; }
figure.chart-panel svg { max-width: 100%; height: auto; display: block; }
.legend { font-size: 13px; display: flex; gap: 16px; flex-wrap: wrap; margin-top: 6px; }
.legend span::before { content: ""; display: inline-block; width: 22px; height: 0;
                       vertical-align: middle; margin-right: 6px; border-top: 3px solid; }
.legend .run::before { border-color: var(--run); }
.legend .threshold::before { border-top: 3px dashed #dc2626; }
.legend .baseline::before { border-top: 3px dotted #6b7280; }
.gates { flex: 1 1 420px; min-width: 0; }
.panel > h2:first-child { margin-top: 0; }
ul.gates-list { list-style: none; padding: 0; margin: 0; }
ul.gates-list li { padding: 6px 0; border-bottom: 1px solid var(--line); }
.badge { display: inline-block; min-width: 44px; text-align: center; font-size: 12px;
         font-weight: 700; border-radius: 4px; padding: 1px 6px; margin-right: 8px; }
.badge.pass { background: #dcfce7; color: var(--ok); }
.badge.fail { background: #fee2e2; color: var(--bad); }
.remedy { color: #374151; font-size: 14px; margin: 4px 0 0 54px; }
table { border-collapse: collapse; font-size: 14px; background: #fff; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f3f4f6; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.low, span.low, p.low { color: var(--bad); font-weight: 700; }
.scroll { overflow-x: auto; max-width: 100%; }
.filter { margin: 6px 0 10px; font-size: 14px; }
#only-low:checked ~ .samples details.sample:not(.has-low) { display: none; }
details.sample { background: #fff; border: 1px solid var(--line); border-radius: 6px;
                 margin: 6px 0; }
details.sample > summary { cursor: pointer; padding: 8px 12px; display: flex; flex-wrap: wrap;
                           gap: 6px 10px; align-items: baseline; }
details.sample[open] > summary { border-bottom: 1px solid var(--line); background: #f9fafb; }
.sid { font-weight: 700; overflow-wrap: anywhere; }
.cat { font-size: 12px; background: #eef2ff; color: #3730a3; border-radius: 4px;
       padding: 1px 6px; overflow-wrap: anywhere; }
.chip { font-size: 13px; border: 1px solid var(--line); border-radius: 10px; padding: 0 8px;
        font-variant-numeric: tabular-nums; white-space: nowrap; }
.chip.low { border-color: #fca5a5; background: #fef2f2; }
.chip.undefined { color: var(--muted); font-style: italic; }
.sample-body { padding: 4px 16px 14px; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; margin: 4px 0;
        background: #f9fafb; border-left: 3px solid var(--line); padding: 4px 10px; }
mark.unsupported { background: #fecaca; color: #7f1d1d; text-decoration: underline wavy #dc2626;
                   padding: 0 1px; }
ol.chunks { padding-left: 28px; margin: 4px 0; }
ol.chunks li { margin: 4px 0; }
ol.chunks li.useless .text { border-left-color: #9ca3af; color: var(--muted);
                             background: repeating-linear-gradient(135deg, #f9fafb 0 8px,
                             #f3f4f6 8px 16px); }
ol.chunks li.useful .text { border-left-color: #22c55e; }
.tag { font-size: 12px; font-weight: 600; border-radius: 4px; padding: 0 6px; }
.tag.good { background: #dcfce7; color: var(--ok); }
.tag.bad { background: #fee2e2; color: var(--bad); }
tr.bad td { background: #fef2f2; }
.metric-block { margin-top: 10px; }
dl.generic { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 4px 0;
             font-size: 14px; }
dl.generic dt { color: var(--muted); }
dl.generic dd { margin: 0; overflow-wrap: anywhere; white-space: pre-wrap; }
footer { margin-top: 32px; font-size: 13px; color: var(--muted); }
"""
