// SPDX-License-Identifier: GPL-2.0-or-later
// domprof report --format html: draws the page from the JSON in
// #domprof-data (pp/report-html.c, doc/report.md "HTML"). Every name in it
// comes from the profiled session and is untrusted: it only ever reaches
// the page through textContent, setAttribute or createTextNode, never as
// markup. Elements the tests read carry data- attributes with the numbers.
'use strict';
(function () {
	const SVGNS = 'http://www.w3.org/2000/svg';
	const FRAME_H = 17;
	const MIN_PX = 0.5; // frames narrower than this are not drawn

	function el(tag, attrs, text) {
		const e = document.createElement(tag);
		for (const k in attrs || {})
			e.setAttribute(k, attrs[k]);
		if (text !== undefined)
			e.textContent = text;
		return e;
	}
	function svg(tag, attrs) {
		const e = document.createElementNS(SVGNS, tag);
		for (const k in attrs || {})
			e.setAttribute(k, attrs[k]);
		return e;
	}
	function pct(n, total) {
		return total ? (100 * n / total).toFixed(2) + ' %' : '-';
	}
	function secs(ns) {
		return (ns / 1e9).toFixed(3) + ' s';
	}

	// ---- the domain table ----

	function domainTable(t) {
		const table = el('table', {class: 'domains', id: 'domain-table'});
		const head = el('tr');
		for (const c of t.columns)
			head.appendChild(el('th', {'data-key': c.key}, c.head));
		head.appendChild(el('th', {'data-key': 'event'}, 'event'));
		table.appendChild(head);
		for (const r of t.rows) {
			const tr = el('tr', {class: 'domain-row'});
			r.cells.forEach(function (v, i) {
				tr.appendChild(el('td', {'data-key': t.columns[i].key}, v));
			});
			tr.appendChild(el('td', {'data-key': 'event'}, r.event));
			table.appendChild(tr);
		}
		return table;
	}

	// ---- the timeline ----

	function timeline(data, dom, durNs) {
		const t = dom.timeline;
		const box = el('div', {class: 'timeline-box'});
		if (!t) {
			box.appendChild(el('p', {class: 'empty'},
				'No timeline for this domain (the session has one only when ' +
				'recorded with domains).'));
			return box;
		}
		const W = 1000, H = 150, L = 50, R = 50, T = 8, B = 20;
		const nb = Math.max(1, Math.ceil(durNs / t.bucket_ns), t.cpu.length);
		const s = svg('svg', {class: 'timeline', viewBox: '0 0 ' + W + ' ' + H,
			preserveAspectRatio: 'none', 'data-domain': dom.name});
		const x = function (i) { return L + (W - L - R) * i / nb; };
		const y0 = H - B;
		function series(cls, vals, label) {
			let max = 0, total = 0;
			for (const v of vals) {
				max = Math.max(max, v);
				total += v;
			}
			const y = function (v) { return y0 - (max ? (y0 - T) * v / max : 0); };
			// the area starts on the axis, the line at its first value
			let d = cls === 'cpu' ? 'M' + x(0) + ' ' + y0 : '';
			for (let i = 0; i < nb; i++) {
				const v = i < vals.length ? vals[i] : 0;
				d += (d ? ' L' : 'M') + x(i) + ' ' + y(v) + ' L' + x(i + 1) + ' ' + y(v);
			}
			if (cls === 'cpu')
				d += ' L' + x(nb) + ' ' + y0 + ' Z';
			const p = svg('path', {class: 'tl-series ' + cls, d: d, 'data-domain': dom.name,
				'data-series': cls, 'data-total': String(total),
				'data-buckets': String(vals.length), 'data-max': String(max)});
			const title = svg('title');
			title.textContent = label + ': ' + total + ' in all, at most ' + max +
				' per bucket';
			p.appendChild(title);
			s.appendChild(p);
			return max;
		}
		s.appendChild(svg('line', {class: 'axis', x1: L, y1: y0, x2: W - R, y2: y0}));
		const cmax = series('cpu', t.cpu, 'CPU use, samples');
		let wmax = null;
		if (t.wait)
			wmax = series('wait', t.wait, 'vCPU wait, ns');
		function label(xp, yp, text, anchor) {
			const e = svg('text', {x: xp, y: yp, 'text-anchor': anchor});
			e.textContent = text;
			s.appendChild(e);
		}
		label(L - 4, T + 8, String(cmax), 'end');
		label(L - 4, y0, '0', 'end');
		if (wmax !== null)
			label(W - R + 4, T + 8, (wmax / 1e6).toFixed(1) + ' ms', 'start');
		label(L, H - 5, '0 s', 'start');
		label(W - R, H - 5, secs(nb * t.bucket_ns), 'end');
		box.appendChild(s);
		const lg = el('div', {class: 'legend'});
		lg.appendChild(el('span', {class: 'key-cpu'}, '\u25a0 CPU use (samples of ' +
			(t.event || 'the first event') + ' per bucket, left scale)'));
		if (t.wait)
			lg.appendChild(el('span', {class: 'key-wait'}, '   \u2014 vCPU wait (' +
				(t.sched ? 'runnable time' : 'schedstat wait') +
				' of its ' + t.vcpus + ' vCPU threads per bucket, right scale)'));
		lg.appendChild(document.createTextNode('   buckets of ' +
			(t.bucket_ns / 1e6) + ' ms'));
		box.appendChild(lg);
		return box;
	}

	// ---- the flame graph ----

	// The tree of a domain's stacks: the domain at its root.
	function buildTree(dom) {
		const fl = dom.flame;
		let nextId = 0;
		const root = {id: nextId++, name: dom.name, value: 0, self: 0, parent: null,
			kids: new Map(), depth: 0};
		for (const st of fl.stacks) {
			const n = st[0];
			let node = root;
			root.value += n;
			for (let k = 1; k < st.length; k++) {
				const name = fl.names[st[k]];
				let c = node.kids.get(name);
				if (!c) {
					c = {id: nextId++, name: name, value: 0, self: 0, parent: node,
						kids: new Map(), depth: node.depth + 1};
					node.kids.set(name, c);
				}
				c.value += n;
				node = c;
			}
			node.self += n;
		}
		return root;
	}

	function hue(name) {
		let h = 0;
		for (let i = 0; i < name.length; i++)
			h = (h * 31 + name.charCodeAt(i)) >>> 0;
		return h;
	}
	function colour(node) {
		const h = hue(node.name);
		// warm colours as flamegraph.pl's, the root and first levels greyer
		if (node.depth === 0)
			return 'rgb(200,200,200)';
		return 'hsl(' + (h % 55) + ',' + (65 + (h >> 8) % 25) + '%,' +
			(62 + (h >> 16) % 14) + '%)';
	}

	function flameGraph(data, dom, idx) {
		const box = el('div', {class: 'flame-box'});
		const fl = dom.flame;
		if (!fl || !fl.stacks.length) {
			box.appendChild(el('p', {class: 'empty'}, 'No samples of ' +
				(data.event || 'any event') + ' in this domain.'));
			return null;
		}
		const root = buildTree(dom);
		const byId = [];
		(function index(n) {
			byId[n.id] = n;
			for (const c of n.kids.values())
				index(c);
		})(root);
		const what = fl.source === 'stacks'
			? 'From call stacks: ' + fl.total + ' of the domain\u2019s ' + fl.samples +
				' samples of ' + data.event + ' had one. Levels: domain, command, ' +
				'then the frames, callers above callees.'
			: 'The session has no call stacks for this domain: built from its ' +
				'per-symbol rows (domain, mode, image, symbol), ' + fl.total +
				' samples of ' + data.event + '.';
		box.appendChild(el('p', {class: 'flame-source', 'data-source': fl.source}, what));
		const bar = el('div', {class: 'toolbar'});
		const search = el('input', {type: 'search', class: 'flame-search',
			placeholder: 'search frames (text, case-insensitive)',
			'aria-label': 'search ' + dom.name + '\u2019s frames'});
		const reset = el('button', {type: 'button', class: 'flame-reset'}, 'reset zoom');
		const match = el('span', {class: 'flame-match', 'data-domain': dom.name,
			'data-samples': '0'});
		const info = el('span', {class: 'flame-info'});
		bar.append(search, reset, match, info);
		box.appendChild(bar);
		const area = el('div', {class: 'flame', 'data-domain': dom.name,
			'data-source': fl.source, 'data-total': String(root.value)});
		box.appendChild(area);
		const state = {zoom: root, query: ''};

		function matches(n) {
			return state.query !== '' && n.name.toLowerCase().indexOf(state.query) >= 0;
		}
		// Samples under matching frames, each stack counted once.
		function matched(n) {
			if (matches(n))
				return n.value;
			let s = 0;
			for (const c of n.kids.values())
				s += matched(c);
			return s;
		}
		function frame(n, leftFrac, widthFrac, depth, ancestor) {
			const d = el('div', {class: 'frame' + (ancestor ? ' ancestor' : '') +
					(matches(n) ? ' match' : ''),
				'data-id': String(n.id), 'data-parent': n.parent ? String(n.parent.id) : '',
				'data-depth': String(n.depth), 'data-samples': String(n.value),
				'data-self': String(n.self)}, n.name);
			d.style.left = (100 * leftFrac) + '%';
			d.style.width = (100 * widthFrac) + '%';
			d.style.top = (depth * FRAME_H) + 'px';
			d.style.background = colour(n);
			d.title = n.name + '\n' + n.value + ' samples, ' + pct(n.value, root.value) +
				' of the domain\u2019s graph (self ' + n.self + ')';
			return d;
		}
		function draw() {
			area.textContent = '';
			const px = area.clientWidth || 1200;
			const z = state.zoom;
			const chain = [];
			for (let a = z.parent; a; a = a.parent)
				chain.unshift(a);
			const frag = document.createDocumentFragment();
			chain.forEach(function (a, i) {
				frag.appendChild(frame(a, 0, 1, i, true));
			});
			let maxDepth = chain.length;
			(function lay(n, left, depth) {
				const w = n.value / z.value;
				if (w * px < MIN_PX)
					return;
				frag.appendChild(frame(n, left, w, depth, false));
				maxDepth = Math.max(maxDepth, depth);
				let l = left;
				const kids = Array.from(n.kids.values()).sort(function (a, b) {
					return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
				});
				for (const c of kids) {
					lay(c, l, depth + 1);
					l += c.value / z.value;
				}
			})(z, 0, chain.length);
			area.appendChild(frag);
			area.style.height = ((maxDepth + 1) * FRAME_H + 2) + 'px';
			area.setAttribute('data-zoom', String(z.id));
			const m = matched(root);
			match.setAttribute('data-samples', String(m));
			match.textContent = state.query === '' ? ''
				: 'matched: ' + m + ' of ' + root.value + ' samples (' +
					pct(m, root.value) + ')';
		}
		area.addEventListener('click', function (ev) {
			const t = ev.target.closest('.frame');
			if (!t)
				return;
			state.zoom = byId[Number(t.getAttribute('data-id'))] || root;
			draw();
		});
		area.addEventListener('mouseover', function (ev) {
			const t = ev.target.closest('.frame');
			if (!t)
				return;
			const n = byId[Number(t.getAttribute('data-id'))];
			if (n)
				info.textContent = n.name + ': ' + n.value + ' samples (' +
					pct(n.value, root.value) + ')';
		});
		search.addEventListener('input', function () {
			state.query = search.value.toLowerCase();
			draw();
		});
		reset.addEventListener('click', function () {
			state.zoom = root;
			draw();
		});
		return {box: box, draw: draw, state: state, search: search, byId: byId, idx: idx};
	}

	// ---- the page ----

	function main() {
		const src = document.getElementById('domprof-data');
		const data = JSON.parse(src.textContent);
		const app = document.getElementById('app');
		app.textContent = '';
		document.title = 'domprof report: ' + data.session;
		app.appendChild(el('h1', {}, 'domprof report'));
		app.appendChild(el('p', {class: 'meta'}, 'Session: ' + data.session));
		let durNs = 0;
		if (data.start_ns !== undefined && data.end_ns > data.start_ns)
			durNs = data.end_ns - data.start_ns;
		app.appendChild(el('p', {class: 'meta'}, 'Duration: ' +
			(durNs ? secs(durNs) : 'unknown') + ', ' + data.ncpus + ' CPUs' +
			(data.timer_mode ? ', timer mode' : '') +
			(data.complete ? '' : ' (the recording did not finish cleanly)')));
		app.appendChild(el('p', {class: 'meta'}, 'Events: ' + data.events.map(function (e) {
			return e.name + ' (' + e.samples + ' samples)';
		}).join(', ') + (data.event ? '; timelines and flame graphs of ' + data.event : '')));
		if (data.notes.length) {
			// a long list folded away: the tables and graphs stay in sight
			const det = el('details', {class: 'notes-box'});
			det.open = data.notes.length <= 5;
			det.appendChild(el('summary', {}, 'Notes (' + data.notes.length + ')'));
			const ul = el('ul', {class: 'notes'});
			for (const n of data.notes)
				ul.appendChild(el('li', {}, n));
			det.appendChild(ul);
			app.appendChild(det);
		}
		app.appendChild(el('h2', {}, 'Domains'));
		app.appendChild(domainTable(data.domain_table));
		const graphs = [];
		data.domains.forEach(function (dom, i) {
			const sec = el('section', {class: 'domain', 'data-domain': dom.name});
			sec.appendChild(el('h2', {}, 'Domain ' + dom.name));
			sec.appendChild(el('h3', {}, 'Timeline'));
			sec.appendChild(timeline(data, dom, durNs));
			sec.appendChild(el('h3', {}, 'Flame graph'));
			const g = flameGraph(data, dom, i);
			if (g) {
				sec.appendChild(g.box);
				graphs.push(g);
			} else {
				sec.appendChild(el('p', {class: 'empty'}, 'No samples of ' +
					(data.event || 'any event') + ' in this domain.'));
			}
			app.appendChild(sec);
		});
		// #search=TEXT searches every graph; #zoom=DOMAIN-INDEX.FRAME-ID zooms one.
		const hash = new URLSearchParams(location.hash.replace(/^#/, ''));
		for (const g of graphs) {
			if (hash.has('search')) {
				g.search.value = hash.get('search');
				g.state.query = g.search.value.toLowerCase();
			}
			const z = (hash.get('zoom') || '').split('.');
			if (z.length === 2 && Number(z[0]) === g.idx && g.byId[Number(z[1])])
				g.state.zoom = g.byId[Number(z[1])];
			g.draw();
		}
		window.addEventListener('resize', function () {
			for (const g of graphs)
				g.draw();
		});
		document.body.setAttribute('data-ready', '1');
	}
	main();
})();
