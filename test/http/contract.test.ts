// The HTTP contract suite (contract-suite.ts) on the embedded SQLite deployment of the demo data.
import { buildDemo } from '../../src/cli/demo-command.js'
import { SQLITE, useDeployment } from '../helpers/deployments.js'
import { httpContractSuite } from './contract-suite.js'

httpContractSuite(useDeployment(SQLITE, buildDemo))
