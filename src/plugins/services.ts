// The gateway's services (src/services/index.ts) as the app's `cardline` decorator: built and started when the
// app registers, closed when it closes.
import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import { createServices, type Services, type ServicesOptions } from '../services/index.js';

declare module 'fastify' {
  interface FastifyInstance {
    cardline: Services;
  }
}

const servicesPlugin: FastifyPluginAsync<Omit<ServicesOptions, 'log'>> = async (app, opts) => {
  const { services, start, close } = await createServices({ ...opts, log: app.log });
  app.addHook('onClose', close);
  try {
    await start();
  } catch (err) {
    await close();
    throw err;
  }
  app.decorate('cardline', services);
};

export default fp(servicesPlugin, { name: 'services' });
