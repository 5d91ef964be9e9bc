// Writes the graph ONNX Runtime's optimizer makes of a model at one level (npm
// onnxruntime-node, CPU build), for compare_fusions_with_ort.py to count.
// usage: node ort_optimize.js MODEL LEVEL OUT.onnx     (LEVEL: basic | extended | all)
const ort = require('onnxruntime-node');

async function main() {
  const [model, level, out] = process.argv.slice(2);
  const started = process.hrtime.bigint();
  await ort.InferenceSession.create(model, {
    graphOptimizationLevel: level, optimizedModelFilePath: out, intraOpNumThreads: 1,
  });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  console.log(JSON.stringify({ session_ms: ms, version: require('onnxruntime-node/package.json').version }));
}
main().catch((e) => { console.error(String(e)); process.exit(1); });
