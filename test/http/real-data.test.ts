// The real-data HTTP suite (real-data-suite.ts) on the embedded SQLite deployment.
import { SQLITE, useDeployment } from '../helpers/deployments.js'
import { loadRealData, REAL_DATA_SKIP, realDataSuite } from './real-data-suite.js'

realDataSuite(useDeployment(SQLITE, loadRealData, { skip: REAL_DATA_SKIP }))
