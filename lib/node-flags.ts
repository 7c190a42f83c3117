// The V8 flags every app of the project runs with: `npm start`, the topology's apps (`npm run
// start:dapr`), the container image (its NODE_OPTIONS, which docker-compose and Kubernetes
// inherit) and dapr.yaml. topology/manifests.test.ts checks that they all say these.
//
// `--max-semi-space-size=16` bounds V8's young generation at 32 MB (two semi-spaces of 16 MB).
// Left to itself, Node 24 grows it to 128 MB on any process that allocates steadily, and keeps
// it: a million-row export took the gateway's anonymous memory from about 75 MB to 195–205 MB,
// most of it that young generation. With the bound the same export peaks at about 105 MB; on
// the chat path it made no difference the bench could show (docs/node.md, "V8 flags").
// V8 reads it only when the process starts (setting it later changes nothing), hence a flag.
export const NODE_FLAGS: readonly string[] = ['--max-semi-space-size=16'];
