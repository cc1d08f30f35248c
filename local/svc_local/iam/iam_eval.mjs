// The IAM policy evaluator of the local stack (svc_local.iam): @cloud-copilot/iam-simulate behind a JSON-lines
// pipe. Each input line is {"id": n, "simulation": <Simulation>}; each output line is
// {"id": n, "result": "Allowed" | "ExplicitlyDenied" | "ImplicitlyDenied", "errors": ...}.
import { createInterface } from 'node:readline'
import { runSimulation } from '@cloud-copilot/iam-simulate'

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity })

function reply(message) {
  process.stdout.write(JSON.stringify(message) + '\n')
}

lines.on('line', async (line) => {
  if (!line.trim()) return
  let id = null
  try {
    const request = JSON.parse(line)
    id = request.id
    const response = await runSimulation(request.simulation, {})
    if (response.resultType === 'error') {
      reply({ id, result: 'Error', errors: response.errors })
      return
    }
    reply({ id, result: response.overallResult })
  } catch (error) {
    reply({ id, result: 'Error', errors: { message: String(error && error.stack ? error.stack : error) } })
  }
})
