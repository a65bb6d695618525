r"""The style and the one script of report.html (the viewer's pages share the style).

The script reads the page's data (:mod:`._html_data`) and never writes markup: every text
goes in with ``textContent``. It

- sorts every ``table.sortable`` by the column whose header button is pressed (numbers by
  their ``data-v``; rows without a value last; ties keep their order);
- pages, sorts and filters the items: by text (id, model, group, input, output, expected
  answer, reasons; case-insensitive), model, metric and state, the same way
  :mod:`itemscore.viewer._query` does for the viewer. When the page holds every item, or was
  opened from a file, it works on the items it holds; when the viewer served it and the run
  has more items than the page holds, each view is asked of the viewer's endpoint
  (``source.items``), which reads them from ``items.parquet``, with a progress bar while it
  works; a search that answers before it has looked at every item (``complete`` false) is
  shown as far as it got and asked again until it has;
- reads and writes the view in the address:
  ``report.html#state=error&metric=f1&model=m&q=paris&sort=metric:f1&dir=desc&page=2&size=50``.

Order of the items: ``sort`` empty is their order in the run; ``id``, ``model``, ``group``
compare naturally (digit runs as numbers, before text runs), ``metric:LABEL`` by the score's
value; ``dir=desc`` reverses that. Items without a value come last in either direction
(by state: skip, then error, then no score), and ties keep the run's order.
"""

from __future__ import annotations

import json

from .._records import STATE_NAMES

__all__ = ["CSS", "SCRIPT"]

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#222;
background:#fff}
main{max-width:1240px;margin:0 auto;padding:16px 24px}
h1{font-size:22px;margin:8px 0}h2{font-size:18px;margin:30px 0 8px;border-bottom:1px solid #ddd}
h3{font-size:15px;margin:20px 0 6px}
table{border-collapse:collapse;margin:6px 0}th,td{padding:3px 8px;text-align:left;
vertical-align:top;border-bottom:1px solid #eee}th{background:#eef2f8;position:sticky;top:0;
z-index:1}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
th[data-type=num]{text-align:right}
.meta{color:#555}.note{color:#6b4700;background:#fff6e0;padding:4px 8px;display:inline-block;
margin:4px 0}
.error-note{color:#7a1f12;background:#fdecea;padding:4px 8px;display:inline-block}
.legend{display:flex;flex-wrap:wrap;gap:6px 16px;align-items:center;margin:6px 0}
.swatch{display:inline-block;width:11px;height:11px;border-radius:50%;margin-right:5px;
vertical-align:-1px}
.swatch.state{border-radius:2px}
.dir{font-size:12px;font-weight:normal;padding:1px 7px;border-radius:9px;margin-left:6px;
white-space:nowrap}
.dir.higher{background:#e8f0fb;color:#1d3f73}.dir.lower{background:#fbeee4;color:#7a3d00}
.win{font-weight:600}
#comparisons td:first-child{white-space:nowrap}
button.sort{border:0;background:none;font:inherit;font-weight:600;padding:0;cursor:pointer;
color:inherit;text-align:inherit}
th[aria-sort=ascending] button.sort::after{content:" \\25B2";font-size:10px}
th[aria-sort=descending] button.sort::after{content:" \\25BC";font-size:10px}
details{margin:6px 0}summary{cursor:pointer;color:#1d3f73}
.scroll{overflow-x:auto;max-width:100%}
svg{max-width:100%;height:auto}svg text{font:12px system-ui,sans-serif}
svg.strip,svg.states{vertical-align:middle}
.ok{color:#00704f}.fail{color:#a5281b}.skip{color:#6b6b6b}.error{color:#8a5a00}
#filters{display:flex;gap:8px 12px;flex-wrap:wrap;align-items:center;margin:8px 0}
#filters input{width:240px}
.pager{display:flex;gap:6px;align-items:center;margin:6px 0}
.pager button{padding:2px 10px}
#items td.text div{white-space:pre-wrap;word-break:break-word;max-width:280px;max-height:9em;
overflow:auto}
#items td.score div.reason{white-space:pre-wrap;word-break:break-word;max-width:220px;
max-height:6em;overflow:auto;color:#555}
#items td:nth-child(-n+4){white-space:nowrap}
.provenance td:first-child{color:#555;white-space:nowrap}
table.leaderboard td{vertical-align:middle}
table.leaderboard tbody.shade td{background:#f1f4f9}
table.leaderboard tbody+tbody{border-top:2px solid #9aa8bd}
table.leaderboard td.tie{text-align:center;font-weight:600;color:#1d3f73;
box-shadow:inset 4px 0 0 #1d3f73;padding-left:12px}
table.leaderboard tbody.shade td.tie{box-shadow:inset 4px 0 0 #6f8fbf}
table.leaderboard td.model{max-width:320px;word-break:break-word}
table.leaderboard th.ranks{font-weight:600}
.not-ranked span{font-weight:600}
svg.rank-bar,svg.rank-axis{display:block}
.runs td{white-space:nowrap}
@media (max-width:1100px){main{padding:10px 12px}#items td.text div{max-width:200px}}
"""

SCRIPT = r"""
(function(){
'use strict';
var STATES=__STATES__;
var data=JSON.parse(document.getElementById('items-data').textContent);
var labels=data.labels,graded=data.graded||labels,items=data.items,total=data.total,
source=data.source;
var remote=!!(source&&source.items&&items.length<total);
function el(id){return document.getElementById(id);}

/* Natural order: digit runs as numbers, before text runs; a prefix first. */
function tokens(s){return String(s).match(/\d+|\D+/g)||[];}
function natural(a,b){
var x=tokens(a),y=tokens(b),n=Math.min(x.length,y.length);
for(var i=0;i<n;i++){var p=x[i],q=y[i],dp=/^\d/.test(p),dq=/^\d/.test(q);
if(dp!==dq)return dp?-1:1;
if(dp){var sp=p.replace(/^0+/,''),sq=q.replace(/^0+/,'');
if(sp.length!==sq.length)return sp.length<sq.length?-1:1;
if(sp!==sq)return sp<sq?-1:1;}
else if(p!==q)return p<q?-1:1;}
return x.length-y.length;}

/* Sortable tables: numbers by data-v, text naturally; no value last; ties keep their order. */
document.querySelectorAll('table.sortable').forEach(function(table){
var heads=table.tHead.rows[0].cells;
Array.prototype.forEach.call(heads,function(th,col){
var button=th.querySelector('button.sort');if(!button)return;
button.addEventListener('click',function(){
var desc=th.getAttribute('aria-sort')==='ascending';
Array.prototype.forEach.call(heads,function(h){h.removeAttribute('aria-sort');});
th.setAttribute('aria-sort',desc?'descending':'ascending');
var numeric=th.getAttribute('data-type')==='num';
var body=table.tBodies[table.tBodies.length-1];
var rows=Array.prototype.slice.call(body.rows);
var keyed=rows.map(function(row,i){var td=row.cells[col],v=td?td.getAttribute('data-v'):null;
if(v===null&&td)v=td.textContent;if(v==='')v=null;
return {row:row,i:i,v:(numeric&&v!==null)?parseFloat(v):v};});
keyed.sort(function(a,b){
if(a.v===null||b.v===null){if(a.v===b.v)return a.i-b.i;return a.v===null?1:-1;}
var c=numeric?(a.v<b.v?-1:a.v>b.v?1:0):natural(a.v,b.v);
return (desc?-c:c)||a.i-b.i;});
keyed.forEach(function(k){body.appendChild(k.row);});});});});

/* The items table. */
var q=el('q'),fm=el('f-model'),fl=el('f-metric'),fs=el('f-status'),fz=el('f-size');
var body=document.querySelector('#items tbody'),count=el('count'),pageText=el('page');
var view={q:'',model:'',metric:'',state:'',sort:'',dir:'asc',page:1,size:50};
var pages=1,asked=0;
function option(sel,value){var o=document.createElement('option');o.value=value;
o.textContent=value;sel.appendChild(o);}
data.models.forEach(function(m){option(fm,m);});labels.forEach(function(l){option(fl,l);});
STATES.forEach(function(s){option(fs,s);});

function matches(it){
if(view.model&&it.model!==view.model)return false;
if(view.state){var which=view.metric?[view.metric]:labels;
if(!which.some(function(l){var s=it.scores[l];return s&&s[0]===view.state;}))return false;}
if(view.q){var hay=[it.id,it.model,it.group,it.input,it.output,it.expected];
labels.forEach(function(l){var s=it.scores[l];if(s)hay.push(s[2]);});
hay=hay.filter(function(h){return h!==null&&h!==undefined;}).join('\n').toLowerCase();
if(hay.indexOf(view.q.toLowerCase())<0)return false;}
return true;}
function sortKey(it){
if(view.sort.indexOf('metric:')===0){var s=it.scores[view.sort.slice(7)];
return s?{v:s[1],r:STATES.indexOf(s[0])}:{v:null,r:9};}
var v=it[view.sort];return {v:v===undefined?null:v,r:0};}
function localView(){
var found=[];items.forEach(function(it,i){if(matches(it))found.push({it:it,i:i});});
if(view.sort){var metric=view.sort.indexOf('metric:')===0,known=[],unknown=[];
found.forEach(function(f){f.k=sortKey(f.it);(f.k.v===null?unknown:known).push(f);});
known.sort(function(a,b){var c=metric?(a.k.v<b.k.v?-1:a.k.v>b.k.v?1:0):natural(a.k.v,b.k.v);
return (view.dir==='desc'?-c:c)||a.i-b.i;});
unknown.sort(function(a,b){return (a.k.r-b.k.r)||a.i-b.i;});
found=known.concat(unknown);}
var start=(view.page-1)*view.size,page=found.slice(start,start+view.size);
return {total:found.length,offset:start,items:page.map(function(f){return f.it;}),
positions:page.map(function(f){return f.i;})};}
function params(){var p=new URLSearchParams();
['q','model','metric','state','sort'].forEach(function(k){if(view[k])p.set(k,view[k]);});
if(view.dir!=='asc')p.set('dir',view.dir);if(view.page!==1)p.set('page',String(view.page));
if(view.size!==50)p.set('size',String(view.size));return p;}

function cell(tr,text,cls){var td=document.createElement('td');
if(cls)td.className=cls;
if(cls==='text'){var d=document.createElement('div');d.textContent=text;td.appendChild(d);}
else td.textContent=text;
tr.appendChild(td);return td;}
function shown(v){return v===null?'':String(Number(v.toPrecision(4)));}
function draw(result){
while(body.firstChild)body.removeChild(body.firstChild);
result.items.forEach(function(it,n){
var tr=document.createElement('tr');
cell(tr,String(result.positions[n]+1),'num');
cell(tr,it.attempt==null?it.id:it.id+' \u00b7 attempt '+it.attempt);cell(tr,it.model||'');
cell(tr,it.group||'');cell(tr,it.input===null?'':it.input,'text');
cell(tr,it.output===null?'(no output)':it.output,'text');cell(tr,it.expected||'','text');
labels.forEach(function(l){if(view.metric&&l!==view.metric)return;
var s=it.scores[l];if(!s){cell(tr,'');return;}
var td=cell(tr,'','score');var st=document.createElement('span');
var shownState=s[0]!=='ok'||graded.indexOf(l)>=0;st.className=shownState?s[0]:'';
st.textContent=shownState?s[0]:'';var v=document.createElement('span');v.className='num';
v.textContent=s[1]===null?'':shown(s[1])+' ';td.appendChild(v);td.appendChild(st);
if(s[2]){var r=document.createElement('div');r.className='reason';r.textContent=s[2];
td.appendChild(r);}});
body.appendChild(tr);});
pages=Math.max(1,Math.ceil(result.total/view.size));
var first=result.total?result.offset+1:0,last=result.offset+result.items.length;
var text=result.total+' matching item'+(result.total===1?'':'s');
if(!remote&&items.length<total)text+=' among the first '+items.length+' of '+total+
' items this page holds';
count.textContent=text+(result.total?' · showing '+first+'\u2013'+last:'');
pageText.textContent='page '+view.page+' of '+pages;
el('p-first').disabled=el('p-prev').disabled=view.page<=1;
el('p-next').disabled=el('p-last').disabled=view.page>=pages;
document.querySelectorAll('#items thead th.metric').forEach(function(th){
th.style.display=(view.metric&&th.dataset.label!==view.metric)?'none':'';});
document.querySelectorAll('#items thead th[data-sort]').forEach(function(th){
var k=th.getAttribute('data-sort');
if(k===view.sort&&k)th.setAttribute('aria-sort',view.dir==='desc'?'descending':'ascending');
else th.removeAttribute('aria-sort');});}
/* While the viewer works: a progress bar (how many items a search has looked at). */
function busy(text,done,of){count.textContent=text;var b=document.createElement('progress');
b.id='busy';if(of){b.max=of;b.value=done;}count.appendChild(b);
el('items').setAttribute('aria-busy','true');}
function render(){
history.replaceState(null,'','#'+params().toString());
if(!remote){draw(localView());return;}
var p=params(),mine=++asked;p.set('offset',String((view.page-1)*view.size));
p.set('limit',String(view.size));p.delete('page');p.delete('size');
busy('loading items… ');ask(p,mine);}
/* A search answers with its first page of hits, then goes on each time it is asked. */
function ask(p,mine){
fetch(source.items+'?'+p.toString(),{credentials:'same-origin'}).then(function(r){
if(!r.ok)return r.text().then(function(t){throw new Error(t||r.statusText);});
return r.json();}).then(function(result){if(mine!==asked)return;
if(result.complete!==false){draw(result);el('items').removeAttribute('aria-busy');return;}
if(result.items.length)draw(result);
busy('searching: '+result.total.toLocaleString()+' matching so far, '+
result.scanned.toLocaleString()+' of '+result.of.toLocaleString()+' items searched ',
result.scanned,result.of);ask(p,mine);})
.catch(function(e){if(mine===asked){count.textContent='The viewer did not answer: '+e.message;
el('items').removeAttribute('aria-busy');}});}
function changed(){view.q=q.value;view.model=fm.value;view.metric=fl.value;
view.state=fs.value;view.size=parseInt(fz.value,10)||50;view.page=1;render();}
[q,fm,fl,fs,fz].forEach(function(c){c.addEventListener('input',changed);});
function go(page){view.page=Math.min(Math.max(1,page),pages);render();}
el('p-first').addEventListener('click',function(){go(1);});
el('p-prev').addEventListener('click',function(){go(view.page-1);});
el('p-next').addEventListener('click',function(){go(view.page+1);});
el('p-last').addEventListener('click',function(){go(pages);});
document.querySelectorAll('#items thead th[data-sort] button').forEach(function(b){
b.addEventListener('click',function(){var k=b.parentNode.getAttribute('data-sort');
if(view.sort===k&&k)view.dir=view.dir==='asc'?'desc':'asc';else{view.sort=k;view.dir='asc';}
view.page=1;render();});});
var preset=new URLSearchParams(location.hash.slice(1));
if(preset.has('q'))q.value=preset.get('q');
if(preset.has('model'))fm.value=preset.get('model');
if(preset.has('metric'))fl.value=preset.get('metric');
if(preset.has('state'))fs.value=preset.get('state');
if(preset.has('size'))fz.value=preset.get('size');
view.q=q.value;view.model=fm.value;view.metric=fl.value;view.state=fs.value;
view.size=parseInt(fz.value,10)||50;
var sort=preset.get('sort')||'';
if(sort===''||sort==='id'||sort==='model'||sort==='group'||
(sort.indexOf('metric:')===0&&labels.indexOf(sort.slice(7))>=0))view.sort=sort;
view.dir=preset.get('dir')==='desc'?'desc':'asc';
view.page=Math.max(1,parseInt(preset.get('page')||'1',10)||1);
pages=Math.max(1,Math.ceil((remote?total:items.length)/view.size));
render();})();
""".replace("__STATES__", json.dumps(list(STATE_NAMES)))
