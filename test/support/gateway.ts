// The real gateway, as its own process (`emq gateway`), in front of a real server.
export { startGatewayProcess, type GatewayProcess } from '../../scripts/gateway-process.js';
