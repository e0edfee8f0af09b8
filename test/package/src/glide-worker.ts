// A Worker that imports the Node-only glide connection: bundling it must fail (the export has
// only the `node` condition), rather than a Worker failing at run time.
import { connectGlide } from 'echomq-edge/glide';

export default {
  fetch(): Response {
    return new Response(typeof connectGlide);
  },
};
