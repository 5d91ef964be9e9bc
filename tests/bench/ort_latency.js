// Median and p90 latency of one model on ONNX Runtime's CPU build (npm onnxruntime-node),
// with random inputs shaped like fusescope-cli's (symbolic dims = 1); also the session's
// creation and the first run, for the startup comparison. FEEDS="name=file.npy,..." feeds those
// inputs instead (a detection model's work depends on what the image shows).
// usage: [FEEDS=...] node ort_latency.js MODEL THREADS ITERATIONS WARMUP   -> prints JSON
const ort = require('onnxruntime-node');
const fs = require('fs');

// A NumPy .npy file (version 1 or 2, little-endian float32, int64 or int32, C order) as a tensor.
function readNpy(path) {
  const bytes = fs.readFileSync(path);
  const major = bytes[6];
  const headerLength = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + headerLength;
  const header = bytes.toString('latin1', major === 1 ? 10 : 12, start);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${path}: Fortran order`);
  const dims = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').filter((d) => d.trim()).map(Number);
  const data = bytes.buffer.slice(bytes.byteOffset + start, bytes.byteOffset + bytes.length);
  const types = {'<f4': ['float32', Float32Array], '<i8': ['int64', BigInt64Array], '<i4': ['int32', Int32Array]};
  if (!types[descr]) throw new Error(`${path}: dtype ${descr}`);
  const [type, Array] = types[descr];
  return new ort.Tensor(type, new Array(data), dims);
}

async function main() {
  const [model, threads, iterations, warmup] = process.argv.slice(2);
  const created = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(threads), interOpNumThreads: 1,
    executionMode: 'sequential', graphOptimizationLevel: 'all',
  });
  const feeds = {};
  const given = Object.fromEntries((process.env.FEEDS || '').split(',').filter(Boolean).map((f) => f.split('=')));
  for (const name of session.inputNames) {
    if (given[name]) {
      feeds[name] = readNpy(given[name]);
      continue;
    }
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
