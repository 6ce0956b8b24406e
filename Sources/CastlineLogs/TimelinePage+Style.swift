extension TimelinePage {
    static let css = """
    :root { color-scheme: light; }
    body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: #1f2328; margin: 20px 24px; background: #fff; }
    h1 { font-size: 22px; margin: 0 0 4px; }
    h2 { font-size: 17px; margin: 22px 0 8px; }
    h2 small { font-weight: normal; color: #6a737d; font-size: 12px; font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
    .range { margin: 0 0 8px; font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 13px; }
    .duration { color: #57606a; }
    #summary { list-style: none; padding: 0; margin: 0 0 8px; display: flex; flex-wrap: wrap; gap: 8px; }
    #summary li { background: #f3f4f6; border: 1px solid #d8dee4; border-radius: 6px; padding: 3px 10px; }
    #summary li.bad { background: #fdecec; border-color: #f2b8b8; }
    #notes { margin: 4px 0 8px; padding-left: 20px; color: #7a4b00; font-size: 13px; }
    .muted { color: #6a737d; }
    .bad { color: #b42318; }
    #legend { display: flex; flex-wrap: wrap; gap: 4px 16px; align-items: center; margin: 10px 0 12px; font-size: 13px; }
    #legend .key { display: inline-flex; align-items: center; gap: 5px; }
    #legend .hint { color: #6a737d; }
    #legend svg { overflow: visible; }
    #timeline { overflow-x: auto; border: 1px solid #d8dee4; border-radius: 6px; width: fit-content; max-width: 100%; }
    #timeline.empty { padding: 24px; }
    .empty-message { font-size: 16px; color: #57606a; }
    svg.chart { display: block; font-family: system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; }
    .lane-bg { fill: #ffffff; }
    .lane-bg.alt { fill: #f6f8fa; }
    .lane-sep { stroke: #d0d7de; stroke-width: 1; }
    .axis-line { stroke: #8c959f; stroke-width: 1; }
    .grid { stroke: #e1e4e8; stroke-width: 1; }
    .tick-label { font-size: 11px; fill: #57606a; text-anchor: middle; font-variant-numeric: tabular-nums; }
    .tick-date { font-size: 11px; fill: #1f2328; font-weight: 600; text-anchor: middle; }
    .axis-caption { font-size: 11px; fill: #6a737d; }
    .log-edge { stroke: #8c959f; stroke-width: 1; stroke-dasharray: 3 3; }
    .device-name { font-size: 14px; font-weight: 600; fill: #1f2328; }
    .device-id { font-size: 10.5px; fill: #6a737d; font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
    .device-stats { font-size: 11px; fill: #57606a; }
    .device-stats.bad { fill: #b42318; }
    .no-sessions { font-size: 12px; fill: #8c959f; font-style: italic; }
    .session-bar { fill: #eef1f4; }
    .session-outline { fill: none; stroke: #424a53; stroke-width: 1; pointer-events: none; }
    .session.open .session-outline { stroke-dasharray: 4 2; }
    .open-arrow { fill: #2f6fdf; }
    .session-name { font-size: 11px; font-weight: 600; fill: #101418; paint-order: stroke; stroke: rgba(255,255,255,.85); stroke-width: 3px; pointer-events: none; }
    .segment { fill: #8c959f; }
    .segment.state-connecting { fill: #3b82f6; }
    .segment.state-connected { fill: #2da44e; }
    .segment.state-suspended { fill: #e3a008; }
    .segment.state-resuming { fill: #f5c84c; }
    .segment.state-ending { fill: #a8b1bb; }
    .segment.state-ended { fill: #c9d1d9; }
    .segment.state-failed { fill: #d1242f; }
    .state-change line { stroke: #ffffff; stroke-width: 1.5; }
    .marker { fill: #24292f; }
    .end-reason { font-size: 11.5px; fill: #424a53; }
    .end-reason.gone { fill: #b42318; font-weight: 600; }
    .end-reason.app-stopped { fill: #57606a; }
    .end-reason.open { fill: #2f6fdf; font-weight: 600; font-style: italic; }
    .row-base { stroke: #d0d7de; stroke-width: 1; }
    rect.request { fill: #57606a; }
    rect.request.failed { fill: #d1242f; }
    .requests.dense rect.request:not(.failed) { fill: #aab3bd; }
    .failure { fill: #d1242f; stroke: #6e0b10; stroke-width: 1; }
    .failure-guide { stroke: #d1242f; stroke-width: 1; stroke-dasharray: 2 3; opacity: .55; }
    table { border-collapse: collapse; margin: 6px 0 12px; font-size: 13px; }
    th, td { border: 1px solid #d8dee4; padding: 3px 8px; text-align: left; vertical-align: top; }
    th { background: #f3f4f6; font-weight: 600; }
    td.num { text-align: right; font-variant-numeric: tabular-nums; }
    td.mono { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px; white-space: nowrap; }
    td.num { white-space: nowrap; }
    td.states { color: #57606a; font-size: 12px; }
    td.reason { white-space: nowrap; }
    caption { text-align: left; font-weight: 600; font-size: 13px; color: #57606a; padding: 0 0 3px; }
    td.reason.gone { color: #b42318; font-weight: 600; }
    .open { color: #2f6fdf; font-weight: 600; }
    table.failures td { color: #1f2328; }
    table.failures { border-left: 3px solid #d1242f; }
    #tip { position: absolute; display: none; max-width: 460px; white-space: pre-line; background: #1f2328; color: #fff; font-size: 12px; padding: 5px 8px; border-radius: 4px; pointer-events: none; z-index: 10; }

    .content-segment.shown { fill: #2e9e44; } .content-segment.announcement { fill: #2a6fd6; }
    .content-segment.not_shown { fill: #d8433b; } .content-segment.not_observed { fill: #bbb; }
    .story-event { stroke: #fff; stroke-width: 1; } .story-event.app { fill: #e08a00; } .story-event.takeover { fill: #b00020; } .story-event.server { fill: #00838f; }
    .story-event.owner { fill: #555; } .story-event.announcement { fill: #2a6fd6; } .story-event.page { fill: #2e9e44; }
    .story-event.plugin { fill: #7b1fa2; }
    """

    /// Hover tooltips without the browser's delay. The `<title>` elements stay in the DOM (readable
    /// without JS and by tests); while one is shown here its text is lifted so the browser shows no second one.
    static let script = """
    (function () {
      var tip = document.getElementById('tip'), held = null, text = '';
      function titleOf(el) {
        for (; el && el !== document; el = el.parentNode) {
          var c = el.firstElementChild;
          while (c && c.tagName.toLowerCase() !== 'title') { c = c.nextElementSibling; }
          if (c) { return c; }
          if (el.id === 'timeline') { return null; }
        }
        return null;
      }
      function release() { if (held) { held.textContent = text; held = null; } tip.style.display = 'none'; }
      document.addEventListener('mouseover', function (e) {
        var t = titleOf(e.target);
        if (t === held) { return; }
        release();
        if (!t || !t.textContent) { return; }
        held = t; text = t.textContent; t.textContent = '';
        tip.textContent = text; tip.style.display = 'block';
      });
      document.addEventListener('mousemove', function (e) {
        if (held) { tip.style.left = (e.pageX + 14) + 'px'; tip.style.top = (e.pageY + 14) + 'px'; }
      });
      document.addEventListener('mouseleave', release);
    })();

    """
}
