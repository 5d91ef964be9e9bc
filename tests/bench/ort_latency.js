// Median and p90 latency of one model on ONNX Runtime's CPU build (npm onnxruntime-node),
// with random inputs shaped like fusescope-cli's (symbolic dims = 1); also the session's
// creation and the first run, for the startup comparison.
// usage: node ort_latency.js MODEL THREADS ITERATIONS WARMUP   -> prints JSON
const ort = require('onnxruntime-node');

async function main() {
  const [model, threads, iterations, warmup] = process.argv.slice(2);
  const created = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(threads), interOpNumThreads: 1,
    executionMode: 'sequential', graphOptimizationLevel: 'all',
  });
  const feeds = {};
  for (const name of session.inputNames) {
    const meta = session.inputMetadata ? session.inputMetadata.find?.((m) => m.name === name) : undefined;
    const dims = (meta && meta.shape ? meta.shape : []).map((d) => (typeof d === 'number' ? d : 1));
    const n = dims.reduce((a, b) => a * b, 1);
    // Integer inputs (token ids) get small values, as fusescope-cli's random feeds do.
    if (meta && (meta.type === 'int64' || meta.type === 'int32')) {
      const data = meta.type === 'int64' ? new BigInt64Array(n) : new Int32Array(n);
      for (let i = 0; i < n; ++i) data[i] = meta.type === 'int64' ? BigInt(i % 10) : i % 10;
      feeds[name] = new ort.Tensor(meta.type, data, dims);
      continue;
    }
    const data = new Float32Array(n);
    for (let i = 0; i < n; ++i) data[i] = Math.sin(i) * 0.5;
    feeds[name] = new ort.Tensor('float32', data, dims);
  }
  const sessionMs = Number(process.hrtime.bigint() - created) / 1e6;
  const samples = [];
  let firstRunMs = 0;
  for (let i = 0; i < Number(warmup) + Number(iterations); ++i) {
    const start = process.hrtime.bigint();
    await session.run(feeds);
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (i === 0) firstRunMs = ms;
    if (i >= Number(warmup)) samples.push(ms);
  }
  const timed = samples.slice();  // in run order
  samples.sort((a, b) => a - b);
  const rank = (q) => samples[Math.min(samples.length - 1, Math.max(0, Math.ceil(q * samples.length) - 1))];
  console.log(JSON.stringify({
    median: rank(0.5), p90: rank(0.9), samples: timed, session_ms: sessionMs, first_run_ms: firstRunMs,
    version: require('onnxruntime-node/package.json').version,
  }));
}
main().catch((e) => { console.error(String(e)); process.exit(1); });
