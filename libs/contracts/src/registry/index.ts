// Every subject of the system with its payload, across the services: what services and the gateway are
// typed against. It sits above common/ and each service's folder (it imports them all); common/ never
// imports a service's folder, so nothing below can reach back up into a cycle.
export * from './rpc.js';
export * from './requests.js';
export * from './events.js';
export * from './socket.js';
